"""ClusterSpec must behave exactly as TensorFlow's ``tf.train.ClusterSpec``.

``CASES`` pairs an expression (``CS`` is the ClusterSpec class) with what
TensorFlow 2.21 gave for it, recorded by running the same expressions under
``/opt/tfvenv/bin/python``: ``("ok", repr(result))`` or ``(exception class
name, str(exception))``. ``test_matches_live_tensorflow`` re-records them from
a real TensorFlow when ``MINITF_TF_PYTHON`` names its interpreter.

``as_cluster_def()`` returns TF's ClusterDef proto (tensorboard's copy of
TF's protos); it, the plain dict minitf sends on the wire, and building a
ClusterSpec from a ClusterDef are tested separately.
"""

import json
import os
import subprocess
import textwrap

import numpy as np
import pytest

from minitf.distributed.cluster_spec import ClusterSpec
import minitf.compat.v1 as tf

C = '{"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}'
S = '{"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}'

# (label, expression, outcome, text) -- outcome "ok" or the exception class.
CASES = [
    ('repr',
     'repr(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'ok', '"ClusterSpec({\'ps\': [\'ps0:2222\', \'ps1:2222\'], \'worker\': [\'w0:2222\', \'w1:2222\', \'w2:2222\']})"'),
    ('jobs',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).jobs',
     'ok', "['worker', 'ps']"),
    ('as_dict',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).as_dict()',
     'ok', "{'worker': ['w0:2222', 'w1:2222', 'w2:2222'], 'ps': ['ps0:2222', 'ps1:2222']}"),
    ('num_tasks',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).num_tasks(\'worker\')',
     'ok', '3'),
    ('task_indices',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_indices(\'worker\')',
     'ok', '[0, 1, 2]'),
    ('task_address',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'ps\', 1)',
     'ok', "'ps1:2222'"),
    ('job_tasks',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).job_tasks(\'ps\')',
     'ok', "['ps0:2222', 'ps1:2222']"),
    ('bool',
     'bool(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'ok', 'True'),
    ('bool_empty',
     'bool(CS({}))',
     'ok', 'False'),
    ('repr_empty',
     'repr(CS({}))',
     'ok', "'ClusterSpec({})'"),
    ('jobs_empty',
     'CS({}).jobs',
     'ok', '[]'),
    ('hash',
     'hash(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'TypeError', "unhashable type: 'ClusterSpec'"),
    ('eq_copy',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) == CS(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'ok', 'True'),
    ('eq_input_dict',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) == {"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}',
     'ok', 'False'),
    ('eq_internal_dict',
     'CS({"w": ["a", "b"]}) == {"w": {0: "a", 1: "b"}}',
     'ok', 'True'),
    ('eq_list_vs_dict_form',
     'CS({"a": ["x"]}) == CS({"a": {0: "x"}})',
     'ok', 'True'),
    ('eq_tuple_vs_list',
     'CS({"w": ("a",)}) == CS({"w": ["a"]})',
     'ok', 'True'),
    ('ne',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) != CS({})',
     'ok', 'True'),
    ('ne_same',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) != CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]})',
     'ok', 'False'),
    ('eq_int',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) == 3',
     'ok', 'False'),
    ('eq_none',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}) == None',
     'ok', 'False'),
    ('jobs_insertion_order',
     'CS({"z": ["a:1"], "a": ["b:1"]}).jobs',
     'ok', "['z', 'a']"),
    ('jobs_copy_sorted',
     'CS(CS({"z": ["a:1"], "a": ["b:1"]})).jobs',
     'ok', "['a', 'z']"),
    ('sparse_repr',
     'repr(CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}))',
     'ok', '"ClusterSpec({\'ps\': [\'ps0:2222\'], \'worker\': {1: \'w1:2222\', 3: \'w3:2222\'}})"'),
    ('sparse_as_dict',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).as_dict()',
     'ok', "{'worker': {1: 'w1:2222', 3: 'w3:2222'}, 'ps': ['ps0:2222']}"),
    ('sparse_num_tasks',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).num_tasks(\'worker\')',
     'ok', '2'),
    ('sparse_task_indices',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).task_indices(\'worker\')',
     'ok', '[1, 3]'),
    ('sparse_job_tasks',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).job_tasks(\'worker\')',
     'ok', "[None, 'w1:2222', None, 'w3:2222']"),
    ('sparse_task_address_missing',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).task_address(\'worker\', 0)',
     'ValueError', "No task with index 0 in job 'worker'"),
    ('sparse_task_address',
     'CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]}).task_address(\'worker\', 3)',
     'ok', "'w3:2222'"),
    ('sparse_copy_repr',
     'repr(CS(CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]})))',
     'ok', '"ClusterSpec({\'ps\': [\'ps0:2222\'], \'worker\': {1: \'w1:2222\', 3: \'w3:2222\'}})"'),
    ('sparse_copy_eq',
     'CS(CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]})) == CS({"worker": {1: "w1:2222", 3: "w3:2222"}, "ps": ["ps0:2222"]})',
     'ok', 'True'),
    ('dict_dense_as_dict',
     'CS({"w": {1: "b", 0: "a"}}).as_dict()',
     'ok', "{'w': ['a', 'b']}"),
    ('dict_dense_repr',
     'repr(CS({"w": {1: "b", 0: "a"}}))',
     'ok', '"ClusterSpec({\'w\': [\'a\', \'b\']})"'),
    ('str_keys',
     'CS({"w": {"1": "b", "0": "a"}}).as_dict()',
     'ok', "{'w': ['a', 'b']}"),
    ('str_keys_indices',
     'CS({"w": {"1": "b", "0": "a"}}).task_indices("w")',
     'ok', '[0, 1]'),
    ('bad_str_key',
     'CS({"w": {"x": "b"}})',
     'ValueError', "invalid literal for int() with base 10: 'x'"),
    ('none_key',
     'CS({"w": {None: "a"}})',
     'TypeError', "int() argument must be a string, a bytes-like object or a real number, not 'NoneType'"),
    ('float_key',
     'CS({"w": {1.7: "b"}}).as_dict()',
     'ok', "{'w': {1: 'b'}}"),
    ('bool_key',
     'CS({"w": {True: "b"}}).as_dict()',
     'ok', "{'w': {1: 'b'}}"),
    ('numpy_key',
     'CS({"w": {np.int64(2): "a"}}).as_dict()',
     'ok', "{'w': {2: 'a'}}"),
    ('dup_key_str_int',
     'CS({"w": {"0": "a", 0: "b"}}).as_dict()',
     'ok', "{'w': ['b']}"),
    ('tuple_tasks',
     'CS({"w": ("a:1", "b:2")}).as_dict()',
     'ok', "{'w': ['a:1', 'b:2']}"),
    ('unknown_job_num_tasks',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).num_tasks(\'x\')',
     'ValueError', "No such job in cluster: 'x'"),
    ('unknown_job_task_indices',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_indices(\'x\')',
     'ValueError', "No such job in cluster: 'x'"),
    ('unknown_job_task_address',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'x\', 0)',
     'ValueError', "No such job in cluster: 'x'"),
    ('unknown_job_job_tasks',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).job_tasks(\'x\')',
     'ValueError', "No such job in cluster: 'x'"),
    ('bad_index',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'ps\', 5)',
     'ValueError', "No task with index 5 in job 'ps'"),
    ('bad_index_neg',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'ps\', -1)',
     'ValueError', "No task with index -1 in job 'ps'"),
    ('bad_index_str',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'ps\', \'0\')',
     'ValueError', "No task with index '0' in job 'ps'"),
    ('index_bool',
     'CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}).task_address(\'ps\', True)',
     'ok', "'ps1:2222'"),
    ('index_numpy',
     'CS({"w": ["a"]}).task_address("w", np.int64(0))',
     'ok', "'a'"),
    ('addr_int',
     'CS({"w": [1234]})',
     'TypeError', 'Task address 1234 must be bytes or unicode'),
    ('addr_none',
     'CS({"w": [None]})',
     'TypeError', 'Task address None must be bytes or unicode'),
    ('addr_bytes',
     'CS({"w": [b"a:1"]}).as_dict()',
     'ok', "{'w': [b'a:1']}"),
    ('addr_bytes_copy',
     'CS(CS({"w": [b"a:1"]})).as_dict()',
     'ok', "{'w': ['a:1']}"),
    ('addr_bytearray',
     'CS({"w": [bytearray(b"a:1")]}).as_dict()',
     'ok', "{'w': [bytearray(b'a:1')]}"),
    ('addr_bad_utf8',
     'CS({"w": [b"\\xff"]})',
     'UnicodeDecodeError', "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ('addr_nul',
     'CS({"w": ["a\\x00b"]}).as_dict()',
     'ok', "{'w': ['a\\x00b']}"),
    ('job_bytes',
     'CS({b"w": ["a:1"]}).jobs',
     'ok', "[b'w']"),
    ('job_bytes_repr',
     'repr(CS({b"w": [b"a"]}))',
     'ok', '"ClusterSpec({b\'w\': [b\'a\']})"'),
    ('job_bytes_lookup_str',
     'CS({b"w": [b"a"]}).num_tasks("w")',
     'ValueError', "No such job in cluster: 'w'"),
    ('job_bytes_copy',
     'CS(CS({b"w": [b"a:1"]})).as_dict()',
     'ok', "{'w': ['a:1']}"),
    ('job_bad_utf8',
     'CS({b"\\xff": ["a"]})',
     'UnicodeDecodeError', "'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"),
    ('job_int',
     'CS({1: ["a:1"]})',
     'TypeError', 'Job name 1 must be bytes or unicode'),
    ('job_none',
     'CS({None: ["a:1"]})',
     'TypeError', 'Job name None must be bytes or unicode'),
    ('job_mixed_types',
     'CS({1: ["a"], "a": ["b"]})',
     'TypeError', "'<' not supported between instances of 'str' and 'int'"),
    ('job_mixed_bytes_str',
     'CS({"a": ["b"], b"b": ["c"]})',
     'TypeError', "'<' not supported between instances of 'bytes' and 'str'"),
    ('job_empty_name',
     'repr(CS({"": ["a"]}))',
     'ok', '"ClusterSpec({\'\': [\'a\']})"'),
    ('job_unicode',
     'repr(CS({"w\\u00f6rker": ["\\u00e4:1"]}))',
     'ok', '"ClusterSpec({\'wörker\': [\'ä:1\']})"'),
    ('tasks_str',
     'CS({"w": "a:1"})',
     'TypeError', "The tasks for job 'w' must be a list or a dictionary from integers to strings."),
    ('tasks_set',
     'CS({"w": {"a:1"}})',
     'TypeError', "The tasks for job 'w' must be a list or a dictionary from integers to strings."),
    ('tasks_none',
     'CS({"w": None})',
     'TypeError', "The tasks for job 'w' must be a list or a dictionary from integers to strings."),
    ('tasks_generator',
     'CS({"w": (x for x in ["a"])})',
     'TypeError', "The tasks for job 'w' must be a list or a dictionary from integers to strings."),
    ('cluster_list',
     'CS([("w", ["a"])])',
     'TypeError', '`cluster` must be a dictionary mapping one or more job names to lists of network addresses, or a `ClusterDef` protocol buffer'),
    ('cluster_none',
     'CS(None)',
     'TypeError', '`cluster` must be a dictionary mapping one or more job names to lists of network addresses, or a `ClusterDef` protocol buffer'),
    ('cluster_str',
     'CS("w")',
     'TypeError', '`cluster` must be a dictionary mapping one or more job names to lists of network addresses, or a `ClusterDef` protocol buffer'),
    ('cluster_ordereddict',
     'repr(CS(__import__("collections").OrderedDict(w=["a"])))',
     'ok', '"ClusterSpec({\'w\': [\'a\']})"'),
    ('error_order_tasks_before_names',
     'CS({1: ["a"], "w": "x"})',
     'TypeError', "The tasks for job 'w' must be a list or a dictionary from integers to strings."),
    ('error_order_sorted_jobs',
     'CS({"z": [1], "a": [2]})',
     'TypeError', 'Task address 2 must be bytes or unicode'),
    ('empty_job_repr',
     'repr(CS({"w": []}))',
     'ok', '"ClusterSpec({\'w\': {}})"'),
    ('empty_job_as_dict',
     'CS({"w": []}).as_dict()',
     'ok', "{'w': {}}"),
    ('empty_job_num_tasks',
     'CS({"w": []}).num_tasks("w")',
     'ok', '0'),
    ('empty_job_task_indices',
     'CS({"w": []}).task_indices("w")',
     'ok', '[]'),
    ('empty_job_job_tasks',
     'CS({"w": []}).job_tasks("w")',
     'ValueError', 'max() arg is an empty sequence'),
    ('empty_job_bool',
     'bool(CS({"w": []}))',
     'ok', 'True'),
    ('empty_dict_job',
     'CS({"a": {}}).as_dict()',
     'ok', "{'a': {}}"),
    ('empty_job_copy',
     'CS(CS({"w": []})).as_dict()',
     'ok', "{'w': {}}"),
    ('neg_index_as_dict',
     'CS({"w": {-1: "a"}}).as_dict()',
     'ok', "{'w': {-1: 'a'}}"),
    ('neg_index_job_tasks',
     'CS({"w": {-1: "a"}}).job_tasks("w")',
     'IndexError', 'list assignment index out of range'),
    ('neg_and_zero_job_tasks',
     'CS({"w": {-1: "a", 0: "b"}}).job_tasks("w")',
     'ok', "['b']"),
    ('neg_and_zero_as_dict',
     'CS({"w": {-1: "a", 0: "b"}}).as_dict()',
     'ok', "{'w': {-1: 'a', 0: 'b'}}"),
    ('index_int32_max_plus_1',
     'CS({"w": {2**31: "a"}})',
     'ValueError', 'Value out of range: 2147483648'),
    ('index_int32_min_minus_1',
     'CS({"w": {-2**31-1: "a"}})',
     'ValueError', 'Value out of range: -2147483649'),
    ('index_int32_min',
     'CS({"w": {-2**31: "a"}}).as_dict()',
     'ok', "{'w': {-2147483648: 'a'}}"),
    ('index_float_huge',
     'CS({"w": {1e10: "a"}})',
     'ValueError', 'Value out of range: 10000000000'),
    ('input_not_aliased',
     '(lambda d: (CS(d), d["w"].append("b"))[0])({"w": ["a"]}).as_dict()',
     'ok', "{'w': ['a']}"),
    ('as_dict_is_copy',
     '(lambda c: (c.as_dict()["w"].append("z"), c.as_dict())[1])(CS({"w": ["a"]}))',
     'ok', "{'w': ['a']}"),
    ('job_tasks_is_copy',
     '(lambda c: (c.job_tasks("w").append(1), c.job_tasks("w"))[1])(CS({"w": ["a"]}))',
     'ok', "['a']"),
    ('jobs_is_copy',
     '(lambda c: (c.jobs.append("q"), c.jobs)[1])(CS({"w": ["a"]}))',
     'ok', "['w']"),
    ('len',
     'len(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'TypeError', "object of type 'ClusterSpec' has no len()"),
    ('iter',
     'list(CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]}))',
     'TypeError', "'ClusterSpec' object is not iterable"),
    ('contains',
     '\'ps\' in CS({"worker": ["w0:2222", "w1:2222", "w2:2222"], "ps": ["ps0:2222", "ps1:2222"]})',
     'TypeError', "argument of type 'ClusterSpec' is not iterable"),
    ('nested_sort_repr',
     'repr(CS({"b": {2: "x"}, "a": ["y"]}))',
     'ok', '"ClusterSpec({\'a\': [\'y\'], \'b\': {2: \'x\'}})"'),
]


def _evaluate(expr):
    try:
        return "ok", repr(eval(expr, {"CS": ClusterSpec, "np": np}))
    except Exception as e:  # noqa: BLE001 - recording whatever TF raised
        return type(e).__name__, str(e)


@pytest.mark.parametrize("label,expr,outcome,text", CASES, ids=[c[0] for c in CASES])
def test_same_as_tensorflow(label, expr, outcome, text):
    assert _evaluate(expr) == (outcome, text)


_ORACLE = textwrap.dedent("""
    import json, os, sys
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    import numpy as np
    import tensorflow as tf
    out = []
    for label, expr in json.load(sys.stdin):
        try:
            out.append([label, "ok", repr(eval(expr, {"CS": tf.train.ClusterSpec, "np": np}))])
        except Exception as e:
            out.append([label, type(e).__name__, str(e)])
    print("RESULT" + json.dumps(out))
""")


@pytest.mark.skipif(not os.environ.get("MINITF_TF_PYTHON"),
                    reason="set MINITF_TF_PYTHON to a python with tensorflow "
                           "(e.g. /opt/tfvenv/bin/python) to compare with live TF")
def test_matches_live_tensorflow():
    proc = subprocess.run(
        [os.environ["MINITF_TF_PYTHON"], "-c", _ORACLE],
        input=json.dumps([[c[0], c[1]] for c in CASES]),
        capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT")][-1]
    live = {label: (outcome, text) for label, outcome, text in json.loads(line[6:])}
    mismatches = []
    for label, expr, outcome, text in CASES:
        mine = _evaluate(expr)
        if live[label] != mine or live[label] != (outcome, text):
            mismatches.append((label, expr, "tf:", live[label], "minitf:", mine))
    assert not mismatches, "\n".join(map(repr, mismatches))


# ---------------------------------------------------------------- ClusterDef

def test_as_cluster_def_is_tfs_sorted_proto():
    cluster_pb2 = pytest.importorskip("tensorboard.compat.proto.cluster_pb2")
    c = ClusterSpec({"worker": {3: "w3:1", 1: "w1:1"}, "ps": [b"ps0:1"]})
    cd = c.as_cluster_def()
    assert isinstance(cd, cluster_pb2.ClusterDef)
    assert [j.name for j in cd.job] == ["ps", "worker"]
    assert dict(cd.job[0].tasks) == {0: "ps0:1"}
    assert dict(cd.job[1].tasks) == {1: "w1:1", 3: "w3:1"}
    # the text TF prints for it (map entries sorted by key)
    assert str(cd) == ('job {\n  name: "ps"\n  tasks {\n    key: 0\n    value: "ps0:1"\n  }\n}\n'
                       'job {\n  name: "worker"\n  tasks {\n    key: 1\n    value: "w1:1"\n'
                       '  }\n  tasks {\n    key: 3\n    value: "w3:1"\n  }\n}\n')


def test_cluster_spec_from_a_cluster_def_proto():
    pytest.importorskip("tensorboard.compat.proto.cluster_pb2")
    c = ClusterSpec({"worker": ["w0:1", "w1:1"], "ps": ["ps0:1"]})
    back = ClusterSpec(c.as_cluster_def())
    assert back == c and back.jobs == ["ps", "worker"]
    assert back.as_dict() == {"ps": ["ps0:1"], "worker": ["w0:1", "w1:1"]}


def test_plain_cluster_def_is_a_sorted_dict_and_a_copy():
    c = ClusterSpec({"worker": {3: "w3:1", 1: "w1:1"}, "ps": [b"ps0:1"]})
    assert c._plain_cluster_def() == {"job": [
        {"name": "ps", "tasks": {0: "ps0:1"}},
        {"name": "worker", "tasks": {1: "w1:1", 3: "w3:1"}},
    ]}
    assert ClusterSpec({"w": []})._plain_cluster_def() == {"job": [{"name": "w", "tasks": {}}]}
    assert ClusterSpec({})._plain_cluster_def() == {"job": []}
    c = ClusterSpec({"w": ["a"]})
    c._plain_cluster_def()["job"][0]["tasks"][0] = "evil"
    assert c.task_address("w", 0) == "a"


def test_server_def_has_tfs_fields():
    pytest.importorskip("tensorboard.compat.proto.cluster_pb2")
    from minitf.distributed.server import Server
    server = Server.create_local_server(start=False)
    sd = server.server_def
    assert (sd.job_name, sd.task_index, sd.protocol) == ("localhost", 0, "grpc")   # TF: job localhost
    assert sd.cluster == server._cluster.as_cluster_def()
    assert ClusterSpec(sd.cluster).task_address("localhost", 0) == server.address
    server.stop()


def test_from_cluster_def_round_trip_through_msgpack():
    import msgpack
    c = ClusterSpec({"worker": {1: "w1:1", 3: "w3:1"}, "ps": ["ps0:1", "ps1:1"]})
    packed = msgpack.packb(c._plain_cluster_def(), use_bin_type=True)
    back = ClusterSpec.from_cluster_def(msgpack.unpackb(packed, raw=False,
                                                        strict_map_key=False))
    assert back == c
    assert back.jobs == ["ps", "worker"]
    assert repr(back) == repr(c)


def test_from_cluster_def_accepts_string_task_keys():
    back = ClusterSpec.from_cluster_def({"job": [{"name": "w", "tasks": {"0": "a", "1": "b"}}]})
    assert back.as_dict() == {"w": ["a", "b"]}


@pytest.mark.parametrize("bad", [None, {}, {"job": "x"}, {"job": [1]},
                                 {"job": [{"name": "w", "tasks": ["a"]}]}])
def test_from_cluster_def_rejects_garbage(bad):
    with pytest.raises(TypeError):
        ClusterSpec.from_cluster_def(bad)


# ---------------------------------------------------------------- minitf extras

def test_task_names_sorted_by_job_then_index():
    c = ClusterSpec({"worker": {3: "w3:1", 1: "w1:1"}, "ps": ["a", "b"], "chief": ["c"]})
    assert c.task_names() == [
        "/job:chief/replica:0/task:0",
        "/job:ps/replica:0/task:0",
        "/job:ps/replica:0/task:1",
        "/job:worker/replica:0/task:1",
        "/job:worker/replica:0/task:3",
    ]
    assert ClusterSpec({}).task_names() == []
    assert ClusterSpec({"w": []}).task_names() == []


def test_device_prefix():
    c = ClusterSpec({"worker": {3: "w3:1"}, "ps": ["a"]})
    assert c.device_prefix("worker", 3) == "/job:worker/replica:0/task:3"
    assert c.device_prefix("ps", 0) == "/job:ps/replica:0/task:0"
    assert ClusterSpec({b"ps": ["a"]}).device_prefix(b"ps", 0) == "/job:ps/replica:0/task:0"
    with pytest.raises(ValueError, match="No task with index 0 in job 'worker'"):
        c.device_prefix("worker", 0)
    with pytest.raises(ValueError, match="No such job in cluster: 'x'"):
        c.device_prefix("x", 0)


def test_create_local_cluster_starts_in_process_servers_on_free_ports():
    workers, ps = tf.test.create_local_cluster(num_workers=2, num_ps=1)
    try:
        ports = {int(s.target.rsplit(":", 1)[1]) for s in workers + ps}
        assert len(ports) == 3
        assert [s.server_def.job_name for s in workers + ps] == ["worker", "worker", "ps"]
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                v = tf.Variable(2.0)
            with tf.device("/job:worker/task:1"):
                y = v * 5.0
            with tf.Session(workers[0].target) as sess:
                sess.run(v.initializer)
                assert sess.run(y) == 10.0
    finally:
        for s in workers + ps:
            s.stop()
    with pytest.raises(tf.errors.NotFoundError, match="No server factory registered for protocol 'x'"):
        tf.test.create_local_cluster(1, 0, protocol="x")
    with pytest.raises(ValueError, match="num_workers >= 0"):
        tf.test.create_local_cluster(-1, 0)
