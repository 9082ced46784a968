// Generates src/api/schema.d.ts from the platform's OpenAPI document.
//
//   npm run gen:api   [-- path/to/openapi.json]   writes src/api/schema.d.ts
//   npm run check:api [-- path/to/openapi.json]   fails if the committed file is stale
//
// The document comes from the first argument, else $OPENAPI_JSON, else
// ../target/openapi.json, which `villa-api openapi > target/openapi.json`
// (run at the repository root) produces. Reading the binary's output rather
// than a running server keeps CI free of a database.
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const check = args.includes("--check");
const input = resolve(
  root,
  args.find((a) => a !== "--check") ?? process.env.OPENAPI_JSON ?? "../target/openapi.json",
);
const committed = join(root, "src/api/schema.d.ts");
const cli = join(root, "node_modules/openapi-typescript/bin/cli.js");

if (!existsSync(input)) {
  console.error(
    `gen-api: ${input} not found.\n` +
      "Produce it at the repository root with: villa-api openapi > target/openapi.json\n" +
      "(or pass a path: npm run gen:api -- path/to/openapi.json, or set OPENAPI_JSON).",
  );
  process.exit(2);
}

function generate(output) {
  // stdio: only errors matter; the CLI's progress line would clutter CI logs.
  execFileSync(process.execPath, [cli, input, "--output", output], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

if (!check) {
  generate(committed);
  console.log(`gen-api: wrote ${committed} from ${input}`);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), "villa-console-api-"));
try {
  const fresh = join(dir, "schema.d.ts");
  generate(fresh);
  const want = readFileSync(fresh, "utf8");
  const have = existsSync(committed) ? readFileSync(committed, "utf8") : "";
  if (want !== have) {
    const a = have.split("\n");
    const b = want.split("\n");
    let line = 0;
    while (line < a.length && a[line] === b[line]) line++;
    console.error(
      `check:api: src/api/schema.d.ts is out of date with ${input} ` +
        `(first difference at line ${line + 1}).\n` +
        "Run `npm run gen:api` in console/ and commit the result.",
    );
    process.exit(1);
  }
  console.log("check:api: src/api/schema.d.ts is up to date");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
