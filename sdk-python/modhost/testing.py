"""A small test harness for a mod's tests, built as a WASI command (`wasi:cli/run`) and run under
`modhost test-runner`, which gives the mod's imports a generated game db (100 items) and a scratch
store. Test functions are the module's `test_*` functions, run in order; a failed `assert` fails its
test. The runner's arguments filter tests by substring, as `cargo test <filter>` does.

    # tests.py
    from modhost.testing import Run, expect_ok  # `Run` is the `wasi:cli/run` export

    def test_hello():
        ...
"""

import importlib
import sys
import traceback

from componentize_py_types import Err


def run_tests(module, filters=None) -> bool:
    """Runs `module`'s `test_*` functions (those whose name contains one of `filters`, all without);
    prints one line per test and a summary, as libtest does. Answers whether all passed."""
    if filters is None:
        filters = [a for a in sys.argv[1:] if not a.startswith("-")]
    tests = [(n, f) for n, f in vars(module).items() if n.startswith("test_") and callable(f)]
    chosen = [(n, f) for n, f in tests if not filters or any(x in n for x in filters)]
    print(f"\nrunning {len(chosen)} tests")
    failures = []
    for name, fn in chosen:
        try:
            fn()
            print(f"test {name} ... ok")
        except BaseException as e:  # noqa: BLE001 - a test's failure is reported, not raised
            print(f"test {name} ... FAILED")
            failures.append((name, "".join(traceback.format_exception(type(e), e, e.__traceback__))))
    for name, trace in failures:
        print(f"\n---- {name} ----\n{trace}")
    verdict = "ok" if not failures else "FAILED"
    print(
        f"\ntest result: {verdict}. {len(chosen) - len(failures)} passed; {len(failures)} failed; "
        f"{len(tests) - len(chosen)} filtered out"
    )
    sys.stdout.flush()
    return not failures


def command(module_name: str):
    """The `wasi:cli/run` export class running `module_name`'s tests (`Run = command("tests")`)."""

    class Run:
        def run(self):
            if not run_tests(importlib.import_module(module_name)):
                raise Err(None)

    return Run


def expect_ok(response):
    """The `data` of an `envelope.ok` answer; fails the test on anything else."""
    assert response.status == 200, f"status {response.status}: {response.body_preview()}"
    body = response.body_json()
    assert body.get("err") == 0, f"not an ok envelope: {body}"
    return body["data"]
