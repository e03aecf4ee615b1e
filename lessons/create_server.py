"""create_server(cluster_dict, job, task): one task of a cluster, serving until stopped."""
import minitf.compat.v1 as tf   # on real TensorFlow: import tensorflow.compat.v1 as tf


def create_server(cluster_dict, job, task):
    cluster = tf.train.ClusterSpec(cluster_dict)
    server = tf.train.Server(cluster, job_name=job, task_index=task, start=False)
    server.start()
    server.join()
