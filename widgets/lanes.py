"""What each device was doing over a step: running, waiting or idle.

A device's lane in a timeline is cut into segments of three states:

* **running**: at least one op computes on it;
* **waiting**: nothing computes, but an op waits for something outside the
  device: a ``_Recv`` for a tensor from another task, a queue (dequeue,
  enqueue into a full queue), a reader, an accumulator;
* **idle**: nothing at all (the device waits for work to be scheduled).

Waiting is the cost of the parts of a program depending on each other; a
lesson that says "the workers wait for the parameter server" shows it as
the waiting stripes of the workers' lanes.
"""

from dataclasses import dataclass

from minitf.framework import op_def

from .step_trace import RECV_OPS

RUNNING, WAITING, IDLE = "running", "waiting", "idle"
#: TF's receive record (a real TF trace) is waiting time too.
_WAITING_TYPES = set(RECV_OPS) | {"RecvTensor"}


def is_waiting(op_type):
    """Does an op of this type spend its time waiting (not computing)? Its row of
    the op table says (``blocking``); an op type only real TF has is computing."""
    if op_type in _WAITING_TYPES:
        return True
    try:
        return op_def.lookup(op_type).blocking
    except KeyError:
        return False


@dataclass
class Segment:
    state: str
    start: int
    end: int

    @property
    def micros(self):
        return self.end - self.start


def lane_segments(ops, transfers_in, start, end):
    """Segments (running / waiting / idle) covering ``start``..``end`` for
    one device: ``ops`` ran on it, ``transfers_in`` arrived at it (their
    ``asked``..``arrived`` is time the device waited for them)."""
    running = [(o.start, o.end) for o in ops if not is_waiting(o.type)]
    waiting = [(o.start, o.end) for o in ops if is_waiting(o.type)]
    waiting += [(t.asked, t.arrived) for t in transfers_in if t.asked is not None]
    cuts = sorted({start, end} | {t for a, b in running + waiting for t in (a, b)
                                  if start < t < end})
    segments = []
    for a, b in zip(cuts, cuts[1:]):
        if any(s <= a and b <= e for s, e in running):
            state = RUNNING
        elif any(s <= a and b <= e for s, e in waiting):
            state = WAITING
        else:
            state = IDLE
        if segments and segments[-1].state == state:
            segments[-1].end = b
        else:
            segments.append(Segment(state, a, b))
    return segments


def state_totals(segments):
    """``{state: µs}`` over the segments (every state present, maybe 0)."""
    out = {RUNNING: 0, WAITING: 0, IDLE: 0}
    for s in segments:
        out[s.state] += s.micros
    return out


def stack_rows(ops, max_rows):
    """``{id(op): row}``: ops that overlap in time go on different rows
    (first fit, in start order); past ``max_rows`` rows they share the last."""
    row_end = []
    out = {}
    for o in sorted(ops, key=lambda o: (o.start, -o.end)):
        for i, free_at in enumerate(row_end):
            if free_at <= o.start:
                row_end[i] = max(o.end, o.start + 1)
                out[id(o)] = i
                break
        else:
            if len(row_end) < max_rows:
                row_end.append(max(o.end, o.start + 1))
                out[id(o)] = len(row_end) - 1
            else:
                out[id(o)] = max_rows - 1
                row_end[-1] = max(row_end[-1], o.end)
    return out
