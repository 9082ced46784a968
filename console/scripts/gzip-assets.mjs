// Writes a gzip twin (name.gz) of every text asset Vite built into dist/assets:
// the API serves it to browsers that accept gzip (api/src/console.rs), so the
// console needs no compression at request time. Level 9, no file name or time
// in the header: the same asset always compresses to the same bytes.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync, constants } from "node:zlib";

const dir = fileURLToPath(new URL("../dist/assets/", import.meta.url));
let js = 0;
for (const name of readdirSync(dir)) {
  if (!/\.(js|css|svg|json)$/.test(name)) continue;
  const gzip = gzipSync(readFileSync(join(dir, name)), { level: constants.Z_BEST_COMPRESSION });
  writeFileSync(join(dir, `${name}.gz`), gzip);
  if (name.endsWith(".js")) js += gzip.length;
}
console.log(`gzip twins written; all JavaScript: ${(js / 1024).toFixed(1)} KB compressed`);
