/** Style sheets the page imports for their side effect; the bundler (esbuild) inlines them. */
declare module '*.css';
