import { defineConfig } from "vitest/config";
import preact from "@preact/preset-vite";

// `npm run dev` serves the console with hot reload and sends the API's paths
// to the platform (scripts/run, port 8080 unless API_URL says otherwise).
const api = process.env.API_URL ?? "http://127.0.0.1:8080";
const apiPaths = ["/api", "/management", "/maintenance", "/inventory", "/reporting", "/admin", "/me", "/dev", "/console/config.json"];

export default defineConfig({
  // The platform serves the console under /console (issue 30).
  base: "/console/",
  plugins: [preact()],
  server: {
    proxy: Object.fromEntries(apiPaths.map((path) => [path, { target: api, changeOrigin: false }])),
  },
  // `npm run preview` serves the build as the platform does, under the same
  // Content-Security-Policy (api/src/console.rs), to check a change against it.
  preview: {
    headers: {
      "Content-Security-Policy":
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; font-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; manifest-src 'self'",
    },
  },
  // Unit tests only: e2e/ holds the browser tests, run by Playwright.
  test: { include: ["src/**/*.test.ts", "src/**/*.test.tsx"] },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Never inline assets as data: URLs, so the CSP needs no data: source.
    assetsInlineLimit: 0,
    // Vite's default names (assets/[name]-[hash].js) are content-hashed:
    // the server may cache them forever; index.html is never stored.
    // Every browser we target supports <link rel=modulepreload>; the
    // polyfill would only add bytes to the first load.
    modulePreload: { polyfill: false },
  },
});
