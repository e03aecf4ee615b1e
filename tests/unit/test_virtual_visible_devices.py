"""``gpu_options.visible_device_list`` on virtual GPUs: pick and renumber cards,
so that two sessions of one process can be given separate cards."""

import pytest

import minitf
import minitf.compat.v1 as tf


def config(n, visible="", **options):
    return tf.ConfigProto(device_count={"GPU": n}, gpu_options=tf.GPUOptions(
        visible_device_list=visible, virtual_memory_limit_mb=2, **options))


def gpus(cfg):
    return [d for d in minitf.list_devices(config=cfg) if d["device_type"] == "GPU"]


def test_visible_list_picks_and_renumbers_virtual_cards():
    listed = gpus(config(3, "2,0"))
    assert [d["name"][-5:] for d in listed] == ["GPU:0", "GPU:1"]
    assert [d["description"].split(" (")[0] for d in listed] == ["virtual GPU 2",
                                                                  "virtual GPU 0"]
    assert len(gpus(config(3))) == 3


def test_invalid_visible_id_is_an_error():
    with pytest.raises(ValueError, match="invalid GPU id '4'"):
        gpus(config(2, "4"))


def test_sessions_on_separate_cards_do_not_compete():
    def session(visible):
        g = tf.Graph()
        with g.as_default(), tf.device("/gpu:0"):
            t = tf.ones([256, 256]) * 1.0                      # 256 KiB
        return tf.Session(graph=g, config=config(2, visible)), t
    greedy, _ = session("0")                                   # reserves all of card 0
    same, t_same = session("0")
    other, t_other = session("1")
    try:
        with pytest.raises(tf.errors.ResourceExhaustedError):
            same.run(t_same)
        assert other.run(t_other).shape == (256, 256)
    finally:
        for s in (greedy, same, other):
            s.close()
