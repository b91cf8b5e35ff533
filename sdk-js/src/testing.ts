// A small test harness for a mod's tests, run as a WASI command under `modhost test-runner` (a real
// generated db, a scratch store, the mod's config): the test module exports `run` (the
// `wasi:cli/run` interface) from `tests(...)`.
//
//   test("hello reads the db", () => { assertEqual(bodyJson(router.call(Request.get("/x/hello"))).err, 0); });
//   export const run = tests();

interface Case {
  name: string;
  f: () => void;
}

const cases: Case[] = [];

/** Declares a test. */
export function test(name: string, f: () => void): void {
  cases.push({ name, f });
}

/** Fails the test with `message` unless `condition`. */
export function assert(condition: unknown, message = "assertion failed"): asserts condition {
  if (!condition) throw new Error(message);
}

/** Fails the test unless `actual` and `expected` are equal as JSON (key order ignored). */
export function assertEqual(actual: unknown, expected: unknown, message = ""): void {
  const canon = (v: unknown): string =>
    JSON.stringify(v, (_, x) =>
      x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : typeof x === "bigint" ? x.toString() : x,
    );
  const [a, e] = [canon(actual), canon(expected)];
  if (a !== e) throw new Error(`${message ? message + ": " : ""}expected ${e}, got ${a}`);
}

/** Fails the test unless `f` throws; answers what it threw. */
export function assertThrows(f: () => unknown, message = "expected a throw"): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error(message);
}

/** Runs every declared test (those whose name contains `filter`, when given), printing one line
 * each as libtest does; answers whether all passed. */
export function runTests(filter?: string): boolean {
  const chosen = cases.filter((c) => !filter || c.name.includes(filter));
  console.log(`\nrunning ${chosen.length} tests`);
  const failures: Array<[string, string]> = [];
  for (const c of chosen) {
    try {
      c.f();
      console.log(`test ${c.name} ... ok`);
    } catch (e) {
      console.log(`test ${c.name} ... FAILED`);
      const err = e as { stack?: string; message?: string };
      failures.push([c.name, `${err?.message ?? String(e)}${err?.stack ? "\n" + err.stack : ""}`]);
    }
  }
  for (const [name, why] of failures) console.log(`\n---- ${name} ----\n${why}`);
  const filtered = cases.length - chosen.length;
  console.log(
    `\ntest result: ${failures.length ? "FAILED" : "ok"}. ${chosen.length - failures.length} passed; ${failures.length} failed; ${filtered} filtered out\n`,
  );
  return failures.length === 0;
}

/** The `wasi:cli/run` export running the declared tests: `export const run = tests();`. A failure
 * makes the command exit 1, which `modhost test-runner` passes on. */
export function tests(filter?: string): { run(): void } {
  return {
    run() {
      if (!runTests(filter)) throw new Error("some tests failed");
    },
  };
}
