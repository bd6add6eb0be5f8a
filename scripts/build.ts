// Bundles the runtime entries: `tsx scripts/build.ts worker|lambda [outfile]`.
import { build, type Plugin } from 'esbuild';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * @aws-sdk/xml-builder's browser build parses XML with DOMParser, which workerd lacks; its pure-JS
 * parser (the Node build's) runs anywhere, so the Worker bundle uses that one.
 */
const pureJsXmlParser: Plugin = {
  name: 'aws-sdk-pure-js-xml-parser',
  setup(b) {
    b.onResolve({ filter: /^\.\/xml-parser(\.browser)?(\.js)?$/ }, (args) => {
      if (!args.importer.includes(`${'@aws-sdk'}/xml-builder`)) return undefined;
      const req = createRequire(args.importer);
      const pkg = dirname(req.resolve('@aws-sdk/xml-builder/package.json'));
      return { path: join(pkg, 'dist-es', 'xml-parser.js') };
    });
  },
};

/** The Workers bundle: one ES module for workerd (R2 binding, or S3 through the fetch-based SDK). */
export async function buildWorker(outfile = join(root, 'dist', 'worker.js')): Promise<string> {
  await build({
    entryPoints: [join(root, 'functions', 'worker.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    mainFields: ['browser', 'module', 'main'],
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    plugins: [pureJsXmlParser],
    logLevel: 'warning',
  });
  return outfile;
}

/** The Lambda bundle: one CommonJS-free ES module for Node 20 with the handler as `handler`. */
export async function buildLambda(outfile = join(root, 'dist', 'lambda', 'index.mjs')): Promise<string> {
  await build({
    entryPoints: [join(root, 'functions', 'lambda.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    logLevel: 'warning',
  });
  return outfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [what, out] = process.argv.slice(2);
  const file = what === 'lambda' ? await buildLambda(out) : await buildWorker(out);
  console.log(`built ${file}`);
}
