// Generates `types/` (TypeScript declarations of modhost's WIT, as a guest sees it) with jco 1.35.0's
// `guest-types`, from the repository's `wit/` (or the folder given as the first argument).
//
//   node scripts/types.mjs            writes types/
//   node scripts/types.mjs --check    fails when types/ differs from what the wit generates
//
// Not `jco guest-types` on the command line: jco 1.35.0 runs its WIT reader on preview2-shim 0.26,
// which starts with no filesystem preopens, so the CLI cannot read any path ("os error 44"). Here the
// shim's preopens are set first (each copy npm installed: jco's own, or a hoisted one).

import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const args = process.argv.slice(2);
const check = args.includes("--check");
const wit = resolve(args.find((a) => !a.startsWith("--")) ?? join(here, "..", "wit"));
const out = join(here, "types");

/** Every preview2-shim under node_modules, however npm laid them out. */
function shims(dir, found = []) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    if (entry.name === "preview2-shim" && existsSync(join(path, "dist/nodejs/filesystem.js"))) {
      found.push(join(path, "dist/nodejs/filesystem.js"));
    } else if (entry.name === "node_modules" || /(^|\/)(node_modules|@[^/]+)$/.test(dir)) {
      // A package's own node_modules, a package, or a scope's package.
      shims(path, found);
    }
  }
  return found;
}

for (const shim of shims(join(here, "node_modules"))) {
  const fs = await import(pathToFileURL(shim).href);
  fs._setPreopens?.({ "/": "/" });
}

const { generateGuestTypes } = await import("@bytecodealliance/jco-transpile");
const generated = await generateGuestTypes(wit, { name: "full", worldName: "full" });

/** All files under `dir`, relative to it. */
function listed(dir, base = dir, found = []) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    entry.isDirectory() ? listed(path, base, found) : found.push(relative(base, path));
  }
  return found;
}

const header = "// Generated from modhost's wit/ by sdk-js/scripts/types.mjs (jco 1.35.0 guest-types). Do not edit.\n";
const files = Object.fromEntries(
  Object.entries(generated).map(([name, bytes]) => [name, header + new TextDecoder().decode(bytes)]),
);
if (check) {
  const stale = [];
  for (const [name, text] of Object.entries(files)) {
    const path = join(out, name);
    if (!existsSync(path) || readFileSync(path, "utf8") !== text) stale.push(name);
  }
  for (const name of listed(out)) if (!(name in files)) stale.push(`${name} (no longer generated)`);
  if (stale.length) {
    console.error(`sdk-js/types is stale against ${wit}: ${stale.join(", ")}; run \`npm run types\` in sdk-js`);
    process.exit(1);
  }
  console.log(`sdk-js/types matches ${wit} (${Object.keys(files).length} files)`);
} else {
  rmSync(out, { recursive: true, force: true });
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(out, name)), { recursive: true });
    writeFileSync(join(out, name), text);
  }
  console.log(`wrote ${Object.keys(files).length} files into ${out}`);
}
