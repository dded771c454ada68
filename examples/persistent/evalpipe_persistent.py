"""evalpipe_persistent: serve a per-case scorer function as a persistent scorer.

evalpipe's persistent scorer mode (`persistent: true` on a `type: subprocess`
scorer, or `evalpipe score --persistent`) starts the command once and keeps it
running. It writes one protocol v0 payload per line on stdin, as compact JSON,
and reads one verdict per line on stdout, in the same order:

    {"score": 0.9, "passed": true, "reason": "..."}   the verdict
    {"error": "ValueError: ..."}                        this case failed

`serve(score_case)` does the line handling, Python 3 standard library only:

    from evalpipe_persistent import serve

    def score_case(payload):
        return {"score": 1.0, "reason": "looks fine"}

    if __name__ == "__main__":
        serve(score_case)

`score_case` gets the payload as a dict and returns the verdict as a dict. If
it raises, that case alone fails with `{"error": "<ExceptionType>: <message>"}`
and the next case is served. Stdout belongs to the protocol: while `serve` runs,
`print()` and anything else written to stdout (file descriptor 1, so child
processes too) goes to stderr instead.
"""

import json
import os
import sys

__all__ = ["serve"]


def _verdict_line(score_case, raw):
    try:
        payload = json.loads(raw.decode("utf-8"))
        verdict = score_case(payload)
        if not isinstance(verdict, dict):
            raise TypeError(
                f"the scorer returned {type(verdict).__name__}, "
                'not a dict with "score"'
            )
        # allow_nan=False: NaN is not JSON, so it fails this case by name.
        return json.dumps(verdict, allow_nan=False)
    except Exception as error:  # any failure of one case is that case's error
        return json.dumps({"error": f"{type(error).__name__}: {error}"})


def serve(score_case):
    """Answer every payload line on stdin with one verdict line on stdout.

    Returns when stdin ends, or quietly when evalpipe stops reading stdout.
    """
    sys.stdout.flush()
    # Keep the real stdout for verdicts and point file descriptor 1 (and
    # sys.stdout) at stderr, so stray output cannot corrupt the protocol.
    verdicts = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    saved, sys.stdout = sys.stdout, sys.stderr
    try:
        for raw in iter(sys.stdin.buffer.readline, b""):
            line = _verdict_line(score_case, raw)
            sys.stderr.flush()
            verdicts.write(line.encode("ascii") + b"\n")  # json.dumps is ASCII
            verdicts.flush()
    except BrokenPipeError:
        # evalpipe closed our stdout: nobody is left to answer.
        pass
    finally:
        sys.stdout = saved
        try:
            verdicts.close()
        except BrokenPipeError:
            pass  # the unflushed rest had no reader either
