import { defineConfig } from "vite";
import preact from "@preact/preset-vite";

export default defineConfig({
  // The platform serves the console under /console (issue 30).
  base: "/console/",
  plugins: [preact()],
  build: {
    outDir: "dist",
    emptyOutDir: true,
    // Never inline assets as data: URLs, so the CSP needs no data: source.
    assetsInlineLimit: 0,
    // Vite's default names (assets/[name]-[hash].js) are content-hashed:
    // the server may cache them forever, and only index.html must revalidate.
    // Every browser we target supports <link rel=modulepreload>; the
    // polyfill would only add bytes to the first load.
    modulePreload: { polyfill: false },
  },
});
