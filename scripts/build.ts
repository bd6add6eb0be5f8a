// Bundles the runtime entries: `tsx scripts/build.ts worker|lambda|cli`.
//   worker: dist/worker.js (R2 and S3) and dist/worker-r2.js (R2 only), ES modules for workerd
//   lambda: dist/lambda/index.mjs and dist/satchel-lambda.zip (handler `index.handler`, Node 20)
//   cli:    dist/cli.js, the `satchel` command's code (bin/satchel.js loads it; `npm install` builds it)
import { build, type Plugin } from 'esbuild';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { zip } from './zip.js';

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

/**
 * A Workers bundle: one ES module for workerd. `s3: true` (the default) is functions/worker.ts, with the
 * fetch-based S3 client for SATCHEL_STORAGE=s3; `s3: false` is functions/worker-r2.ts, R2 binding only.
 */
export async function buildWorker(
  outfile = join(root, 'dist', 'worker.js'),
  options: { s3?: boolean } = {},
): Promise<string> {
  await build({
    entryPoints: [join(root, 'functions', options.s3 === false ? 'worker-r2.ts' : 'worker.ts')],
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

/** The Lambda bundle: one ES module for Node 20 with the handler as `handler`. */
export async function buildLambda(
  outfile = join(root, 'dist', 'lambda', 'index.mjs'),
): Promise<string> {
  await build({
    entryPoints: [join(root, 'functions', 'lambda.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: 'warning',
  });
  return outfile;
}

/**
 * The CLI as one ES module for Node (lib/cli/main.ts and what it imports, zod included), so `satchel` starts
 * without compiling TypeScript. Written to a temporary name and renamed: a test building it while another
 * runs `satchel` never loads half a file.
 */
export async function buildCli(outfile = join(root, 'dist', 'cli.js')): Promise<string> {
  const result = await build({
    entryPoints: [join(root, 'lib', 'cli', 'main.ts')],
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  mkdirSync(dirname(outfile), { recursive: true });
  const tmp = `${outfile}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, result.outputFiles[0]!.contents);
  renameSync(tmp, outfile);
  return outfile;
}

/** The deployable Lambda zip: the bundle as `index.mjs` at the root, so the handler is `index.handler`. */
export function packLambda(
  bundle: string,
  zipfile = join(dirname(bundle), '..', 'satchel-lambda.zip'),
): string {
  mkdirSync(dirname(zipfile), { recursive: true });
  writeFileSync(zipfile, zip([{ name: 'index.mjs', data: readFileSync(bundle) }]));
  return zipfile;
}

/** Size of a file as wrangler reports it: bytes, and gzip at zlib's default level. */
export function bundleSize(file: string): { bytes: number; gzip: number } {
  const data = readFileSync(file);
  return { bytes: data.byteLength, gzip: gzipSync(data).byteLength };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const what = process.argv[2];
  const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
  const report = (file: string) => {
    const { bytes, gzip } = bundleSize(file);
    console.log(`built ${relative(process.cwd(), file)}: ${kib(bytes)}, gzip ${kib(gzip)}`);
  };
  if (what === 'worker') {
    report(await buildWorker());
    report(await buildWorker(join(root, 'dist', 'worker-r2.js'), { s3: false }));
  } else if (what === 'lambda') {
    const bundle = await buildLambda();
    report(bundle);
    const file = packLambda(bundle);
    console.log(
      `packed ${relative(process.cwd(), file)} (${kib(readFileSync(file).byteLength)}): index.mjs, handler index.handler`,
    );
  } else if (what === 'cli') {
    report(await buildCli());
  } else {
    console.error('usage: tsx scripts/build.ts worker|lambda|cli');
    process.exit(2);
  }
}
