// Bundles the runtime entries: `tsx scripts/build.ts worker|lambda|cli|client`.
//   worker: dist/worker/worker.js (R2 and S3) and dist/worker/worker-r2.js (R2 only), ES modules for workerd,
//           and their static assets in dist/assets/
//   lambda: dist/lambda/index.mjs and dist/satchel-lambda.zip (handler `index.handler`, Node 20)
//   cli:    dist/cli.js, the `satchel` command's code (bin/satchel.js loads it; `npm install` builds it)
//   client: packages/client/dist, the installable client package (docs/client.md); `npm run pack:client`
import { build, type Plugin } from 'esbuild';
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { minify } from 'terser';
import type * as TS from 'typescript';
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
 * Two Hono helpers the app never calls, replaced in the Worker bundles by stubs that throw: `app.mount()`
 * (utils/mount.js) and `c.req.parseBody()` (utils/body.js; bodies are read as JSON or bytes). They are
 * reachable only through methods of Hono's classes, so esbuild cannot drop them; this saves 1.3 KB gzip of
 * the R2-only bundle's 120 KB budget. test/functions/worker.test.ts checks that lib/ and functions/ use
 * neither.
 */
const unusedHonoHelpers: Plugin = {
  name: 'unused-hono-helpers',
  setup(b) {
    b.onResolve({ filter: /^\.\/utils\/(mount|body)\.js$/ }, (args) =>
      args.importer.includes(`${'hono'}/dist/`)
        ? { path: args.path, namespace: 'unused-hono' }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'unused-hono' }, (args) => {
      const name = args.path.includes('mount') ? 'createMountedRequest' : 'parseBody';
      const contents = `export const ${name} = () => { throw new Error('${name} is not in this bundle'); };`;
      return { contents, loader: 'js' };
    });
  },
};

/** Hono's modules in the Worker bundles (hono/dist/…): `unusedHonoMembers` scans them, `buildWorker` checks the list. */
const HONO_MODULES = [
  'hono-base.js',
  'context.js',
  'request.js',
  'compose.js',
  'router.js',
  'preset/tiny.js',
  'router/pattern-router/router.js',
  'request/constants.js',
  'utils/url.js',
  'utils/html.js',
  'utils/constants.js',
  'helper/route/index.js',
  'http-exception.js',
];

/**
 * Hono's classes (the app, its context and request) carry members the app never uses: `app.mount()`,
 * `app.request()` (a test helper), `app.fire()` (service-worker syntax), `c.render()` and its layouts,
 * `c.event`, `c.req.blob()`, `c.req.formData()`, `c.req.valid()`, … esbuild keeps them, being methods. In the
 * Worker bundles, each method, getter or function-valued field of those classes whose name is read (as
 * `.name`) neither in Satchel's code (lib/, functions/, not in comments) nor in Hono's modules of the bundle
 * (`HONO_MODULES`) is left out. A use of a member left out would throw where it is made: the Worker tests
 * would fail. test/functions/worker.test.ts checks that the app uses neither `mount()` nor `parseBody()`.
 */
const unusedHonoMembers: Plugin = {
  name: 'unused-hono-members',
  setup(b) {
    let used: Set<string> | undefined;
    b.onLoad({ filter: /hono[\\/]dist[\\/](hono-base|context|request)\.js$/ }, async (args) => {
      const { default: ts } = await import('typescript');
      const dist = args.path.slice(0, args.path.lastIndexOf('dist') + 4);
      used ??= readNames([...HONO_MODULES.map((m) => join(dist, m)), ...ownSources()]);
      const source = readFileSync(args.path, 'utf8');
      const file = ts.createSourceFile(args.path, source, ts.ScriptTarget.Latest, true);
      const cuts: [number, number][] = [];
      const visit = (node: TS.Node): void => {
        if (ts.isClassLike(node))
          for (const m of node.members) {
            const fn =
              ts.isMethodDeclaration(m) ||
              ts.isGetAccessorDeclaration(m) ||
              (ts.isPropertyDeclaration(m) &&
                m.initializer !== undefined &&
                (ts.isArrowFunction(m.initializer) || ts.isFunctionExpression(m.initializer)));
            // `c.req.parseBody()` stays: its stub (`unusedHonoHelpers`) is what the Worker tests check.
            if (
              fn &&
              m.name &&
              ts.isIdentifier(m.name) &&
              !used!.has(m.name.text) &&
              m.name.text !== 'parseBody'
            )
              cuts.push([m.getStart(file), m.end]);
          }
        ts.forEachChild(node, visit);
      };
      visit(file);
      if (cuts.length === 0) throw new Error(`unused-hono-members: none found in ${args.path}`);
      let contents = source;
      for (const [start, end] of cuts.reverse())
        contents = contents.slice(0, start) + contents.slice(end);
      return { contents, loader: 'js' };
    });
  },
};

/** Every name read as a property (`.name`, `?.name`) in these files, outside lines of comment. */
function readNames(files: string[]): Set<string> {
  const names = new Set<string>();
  for (const file of files)
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
      for (const m of line.matchAll(/\.([A-Za-z_$][\w$]*)/g)) names.add(m[1]!);
    }
  return names;
}

/**
 * zod compiles a parser per object schema with `new Function` where a runtime allows it (its "JIT");
 * workerd forbids code generation and zod itself skips the compiler there (`allowsEval` is false under
 * Cloudflare's user agent), so in the Worker bundles that compiler is dead code: it is replaced by a
 * stub that throws. The build fails if zod's source no longer has the function (a new zod version);
 * test/functions/worker.test.ts checks that the stub is in the bundle and that the Worker validates.
 */
const noZodJit: Plugin = {
  name: 'no-zod-jit',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]core[\\/]schemas\.js$/ }, (args) => {
      const source = shortZodThrows(readFileSync(args.path, 'utf8'), args.path);
      const start = source.indexOf('const generateFastpass = (shape) => {');
      const end = source.indexOf('return doc.compile();\n    };', start);
      if (start < 0 || end < 0)
        throw new Error(`no-zod-jit: zod's object compiler not found in ${args.path}`);
      const stub =
        "const generateFastpass = () => { throw new Error('zod JIT is not in this bundle'); };";
      const contents =
        source.slice(0, start) + stub + source.slice(end + 'return doc.compile();\n    };'.length);
      return { contents, loader: 'js' };
    });
  },
};

/**
 * zod parses every schema through a memoizer that lets it follow cycles in its input (`zod` installs it
 * by default; `zod/mini` leaves it out). What Satchel parses comes from JSON.parse or is stored as JSON,
 * so it has no cycles, and its schemas are not recursive (no `z.lazy`: test/functions/worker.test.ts
 * checks), so in the Worker bundles the
 * memoizer is left out as zod/mini does: the schemas then take their plain path. This saved 1,082 B of
 * the R2-only bundle (gzip) on 2026-12-02.
 */
const noZodMemoizer: Plugin = {
  name: 'no-zod-memoizer',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]classic[\\/]schemas\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const line = '        core.config({ memoizer: core.memoizer() });';
      if (!source.includes(line))
        throw new Error(`no-zod-memoizer: zod's default memoizer not found in ${args.path}`);
      return {
        contents: shortZodThrows(
          withoutUncalledMethods(
            withoutUnusedFormatMethods(
              withoutJsonSchemaProcessors(source.replace(line, '        void 0;'), args.path),
              args.path,
            ),
            args.path,
          ),
          args.path,
        ),
        loader: 'js',
      };
    });
  },
};

/**
 * zod's string schema has a method per string format (`.email()`, `.ipv4()`, …), each reaching that
 * format's schema class, its checks and its pattern, so esbuild keeps all 26 however few are called. In the
 * Worker bundles the methods of the formats lib/ does not use (`usesZodFormat`, the scan that trims the
 * format names and patterns) are left out, and their classes with them. This saved 1,708 B of the R2-only
 * bundle (gzip) on 2026-12-05.
 */
function withoutUnusedFormatMethods(source: string, path: string): string {
  const method =
    /^ {4}(\w+)\(params\) \{\n {8}return this\.check\(core\._\w+\(Zod\w+, params\)\);\n {4}\},\n/gm;
  let found = 0;
  const out = source.replace(method, (whole, name: string) => {
    found++;
    return usesZodFormat(name) ? whole : '';
  });
  if (found < 20)
    throw new Error(`no-zod-memoizer: zod's string format methods not found in ${path}`);
  return out;
}

/**
 * Each of zod's classic schemas sets `_zod.processJSONSchema`, its step of the JSON Schema converter,
 * which only that converter reads (zod/v4/core/to-json-schema.js): in the Worker bundles the converter is a
 * stub that throws (`edgeReference`), so the steps are never called. They are left out, and the stubs of
 * json-schema-processors.js they named with them.
 */
function withoutJsonSchemaProcessors(source: string, path: string): string {
  const step =
    /^ {4}inst\._zod\.processJSONSchema = \(ctx, json, params\) => processors\.\w+\(inst, ctx, json, params\);\n/gm;
  let found = 0;
  const out = source.replace(step, () => (found++, ''));
  if (found < 20 || out.includes('processJSONSchema'))
    throw new Error(`no-json-schema-steps: zod's processJSONSchema steps not found in ${path}`);
  return out;
}

/**
 * zod's schema classes carry their methods on their prototypes (`.and()`, `.readonly()`, `.nonoptional()`,
 * `.length()`, …), each reaching the class it makes, with that class's parser: ZodIntersection's value
 * merge, ZodReadonly's freezing, and so on. esbuild keeps them all, however few are called. In the Worker
 * bundles, each one-line method of zod's classic schemas that nothing calls, neither Satchel's code (lib/,
 * functions/) nor a zod module (as `.name(` in a line that is not a comment, and not `z.name(`, a
 * function of zod's namespace: the scan over-includes, so Promise's `.catch(` keeps zod's), is left out,
 * and esbuild drops the classes only they reach. A call to a method left out would throw where it is
 * made, mostly as the modules load: the Worker tests would fail. This saved 912 B of the R2-only bundle
 * (gzip) on 2026-12-05, and 158 B more without comments and `z.readonly(` (`.nonoptional()`, `.readonly()`).
 */
function withoutUncalledMethods(source: string, path: string): string {
  const method = /^ {4}(\w+)\([^)\n]*\) \{\n {8}[^\n]*\n {4}\},\n/gm;
  const called = calledNames(join(dirname(path), '..'));
  let kept = 0;
  const out = source.replace(method, (whole, name: string) =>
    called.has(name) && ++kept ? whole : '',
  );
  if (kept < 20) throw new Error(`zod-uncalled-methods: only ${kept} methods kept in ${path}`);
  return out;
}

/** Every name called as a method (`.name(`) in lib/, functions/ and zod's modules (`v4`: zod/v4). */
function calledNames(v4: string): Set<string> {
  const called = new Set<string>();
  for (const file of zodAndOwnSources(v4))
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      // Not in a line of comment, nor a function of the `z` namespace (`z.readonly(schema)`).
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
      for (const m of line.matchAll(/(?<!\bz)\.([A-Za-z_$][\w$]*)\s*\(/g)) called.add(m[1]!);
    }
  return called;
}

/** zod's modules (`v4`: zod/v4; not its .d.ts files, whose type names would count too) and lib/, functions/. */
function zodAndOwnSources(v4: string): string[] {
  return [...sourcesIn(v4, /\.js$/), ...ownSources()];
}

/** Satchel's own modules: lib/ and functions/. */
function ownSources(): string[] {
  return [...sourcesIn(join(root, 'lib'), /\.ts$/), ...sourcesIn(join(root, 'functions'), /\.ts$/)];
}

function sourcesIn(dir: string, kind: RegExp): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => kind.test(f))
    .map((f) => join(dir, f));
}

/**
 * zod's helpers module (zod/v4/core/util.js) is reached as a namespace (`import * as util`, and `core.util`
 * re-exported), so esbuild keeps every one of its exports. In the Worker bundles, the exports that neither
 * a zod module nor Satchel's own code (lib/, functions/) names (as `util.name`, or in an import or
 * re-export from util.js) are made local to it, and esbuild drops them: base64 and hex codecs,
 * `getParsedType`, `promiseAllObject`, the assertions and others. This saved 922 B of the R2-only bundle
 * (gzip) when it came (b8717dd), and 817 B of the bundle after the codec's checks of a226f1e. zod reaches
 * its helpers only in those ways (no computed access; checked for the pinned 4.6.7). An import or
 * re-export of a dropped name fails the build; a property access through the namespace would not (esbuild
 * does not warn there), so the scan over-includes: any `util.name` in zod's modules or in Satchel's code
 * counts, and the Worker tests run the bundles in workerd.
 */
const zodUtilUsedOnly: Plugin = {
  name: 'zod-util-used-only',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]core[\\/]util\.js$/ }, (args) => {
      const v4 = join(dirname(args.path), '..');
      const used = new Set<string>();
      for (const file of zodAndOwnSources(v4)) {
        if (file === args.path) continue;
        const text = readFileSync(file, 'utf8');
        for (const m of text.matchAll(/\butil\.([A-Za-z_$][\w$]*)/g)) used.add(m[1]!);
        for (const m of text.matchAll(
          /(?:import|export) \{([^}]*)\} from "[./]*(?:core\/)?util\.js"/g,
        ))
          for (const name of m[1]!.split(',')) used.add(name.trim().split(/\s+as\s+/)[0]!);
      }
      if (used.size < 20)
        throw new Error(`zod-util-used-only: found only ${used.size} names in ${v4}`);
      const source = readFileSync(args.path, 'utf8');
      const contents = source.replace(
        /^export (function|const|class) ([A-Za-z_$][\w$]*)/gm,
        (line, kind: string, name: string) => (used.has(name) ? line : `${kind} ${name}`),
      );
      return { contents: shortZodThrows(contents, args.path), loader: 'js' };
    });
  },
};

/**
 * zod's errors for a schema built wrongly (`.extend()` over refinements, a discriminated union with a
 * repeated value, `.pick()` of a missing key, an async schema parsed synchronously), thrown where a
 * schema is made or misused, never for bad input (that is a ZodError's issues, in Satchel's problem
 * JSON): in the Worker bundles, each such `throw new Error(<text>)`, or `super(<text>)` of an error class,
 * in zod's schemas, helpers, checks and core modules throws the place it comes from instead
 * (`zod v4/core/util.js:460`, which the installed zod's source explains). Satchel makes its schemas as its
 * modules load, so one made wrongly fails every Worker test. Applied by the plugins that load those
 * modules (one `onLoad` per module); the build fails if a module has none left (zod's source changed).
 * This saved 205 B of the R2-only bundle (gzip) on 2026-12-04, and 69 B more with checks and core.
 */
function shortZodThrows(source: string, path: string): string {
  const file = path.slice(path.lastIndexOf('v4')).replace(/\\/g, '/');
  let n = 0;
  const out = source.split('\n').map((line, i) =>
    line.replace(/(throw new Error|super)\((?:"[^"]*"|`[^`]*`)\);/, (_, call: string) => {
      n++;
      return `${call}("zod ${file}:${i + 1}");`;
    }),
  );
  if (n === 0) throw new Error(`short-zod-throws: no throw found in ${path}`);
  return out.join('\n');
}

/** shortZodThrows for zod's modules that no other plugin loads: its error classes and its checks. */
const zodErrorSources: Plugin = {
  name: 'zod-error-sources',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]core[\\/](core|checks)\.js$/ }, (args) => ({
      contents: shortZodThrows(readFileSync(args.path, 'utf8'), args.path),
      loader: 'js',
    }));
  },
};

/**
 * zod's English messages name each string format in words (`Invalid ISO datetime`), from a table of 31.
 * Satchel's schemas check one such format, `datetime` (`z.iso.datetime`; its regexes carry their own
 * messages), so in the Worker bundles the table keeps only the entries of formats that lib/ names
 * (`z.iso.<format>`, or `.<format>(` on a string schema); a format left out would read `Invalid <format>`,
 * zod's own fallback. This saved 237 B of the R2-only bundle (gzip) on 2026-12-03.
 */
const usedZodFormats: Plugin = {
  name: 'used-zod-formats',
  setup(b) {
    b.onLoad({ filter: /zod[\\/]v4[\\/]locales[\\/]en\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const start = source.indexOf('const FormatDictionary = {');
      const end = source.indexOf('};', start);
      if (start < 0 || end < 0)
        throw new Error(`used-zod-formats: zod's FormatDictionary not found in ${args.path}`);
      const kept = source
        .slice(start, end)
        .split('\n')
        .filter((line) => {
          const name = /^\s*(\w+):/.exec(line)?.[1];
          return !name || usesZodFormat(name);
        });
      return {
        contents: source.slice(0, start) + kept.join('\n') + source.slice(end),
        loader: 'js',
      };
    });
    // zod's `z.iso` namespace (classic/iso.js) holds a schema class and a function per ISO format, all kept
    // since lib/ reads `z.iso.datetime` through it: the formats lib/ does not use (`date`, `time`,
    // `duration`) leave it, and their classes and checks the bundle with them (`z.iso.date`, and their
    // classes' exports, `z.ZodISODate`, … would read undefined, as their patterns' exports do).
    b.onLoad({ filter: /zod[\\/]v4[\\/]classic[\\/]iso\.js$/ }, (args) => {
      let contents = readFileSync(args.path, 'utf8');
      for (const [format, type] of Object.entries(ZOD_ISO_TYPES)) {
        if (usesZodFormat(format)) continue;
        const fn = new RegExp(`^export function ${format}\\(params\\) \\{\\n[^\\n]*\\n\\}\\n`, 'm');
        const names = new RegExp(`\\b${type}, |, ${type}\\b`, 'g');
        const without = contents.replace(fn, '');
        if (without === contents || (without.match(names) ?? []).length !== 2)
          throw new Error(`used-zod-formats: zod's z.iso.${format} not found in ${args.path}`);
        contents = `${without.replace(names, '')}\nexport const ${type} = undefined;`;
      }
      return { contents, loader: 'js' };
    });
    // The patterns of the formats lib/ does not use: zod's schema of such a format, the only reader of
    // its pattern, is never made. They stay as unexported locals, which esbuild drops, and their exports
    // are undefined. This saved 594 B of the R2-only bundle (gzip) on 2026-12-04.
    b.onLoad({ filter: /zod[\\/]v4[\\/]core[\\/]regexes\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const unused = Object.entries(ZOD_FORMAT_PATTERNS)
        .filter(([format]) => !usesZodFormat(format))
        .flatMap(([, names]) => names);
      let contents = source;
      for (const name of unused) {
        const line = new RegExp(`^export (const|function) ${name}\\b`, 'm');
        if (!line.test(contents))
          throw new Error(`used-zod-formats: zod's pattern ${name} not found in ${args.path}`);
        contents =
          contents.replace(line, `$1 ${name}$unused`) + `\nexport const ${name} = undefined;`;
      }
      return { contents, loader: 'js' };
    });
  },
};

/** zod's string formats (as lib/ would name them) and the exports of zod/v4/core/regexes.js only they read. */
const ZOD_FORMAT_PATTERNS: Record<string, string[]> = {
  email: ['email', 'html5Email', 'rfc5322Email', 'unicodeEmail', 'browserEmail'],
  uuid: ['uuid', 'uuid4', 'uuid6', 'uuid7'],
  guid: ['guid'],
  nanoid: ['nanoid', 'nanoidOfLength'],
  cuid: ['cuid'],
  cuid2: ['cuid2'],
  ulid: ['ulid'],
  xid: ['xid'],
  ksuid: ['ksuid'],
  duration: ['duration', 'extendedDuration'],
  emoji: ['emoji'],
  ipv4: ['ipv4'],
  ipv6: ['ipv6'],
  mac: ['mac'],
  cidrv4: ['cidrv4'],
  cidrv6: ['cidrv6'],
  base64: ['base64'],
  base64url: ['base64url'],
  e164: ['e164'],
};

/** zod's ISO formats other than `datetime` (`z.iso.<format>`) and their schema classes. */
const ZOD_ISO_TYPES: Record<string, string> = {
  date: 'ZodISODate',
  time: 'ZodISOTime',
  duration: 'ZodISODuration',
};

let libSource: string | undefined;

/** Whether lib/ names zod's string format `name` (`z.iso.<name>`, or `.<name>(` on a string schema). */
function usesZodFormat(name: string): boolean {
  libSource ??= readdirSync(join(root, 'lib'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(root, 'lib', f), 'utf8'))
    .join('\n');
  return new RegExp(`z\\.(iso\\.)?${name}\\b|\\.${name}\\(`).test(libSource);
}

/**
 * The session browser's stylesheet (lib/ui/style.ts) on one line: the line breaks and indentation of the
 * template are only for reading it. A break after `;`, `{` or `}` goes; any other becomes one space (CSS
 * treats them alike). This saved 92 B of the R2-only bundle (gzip) on 2026-12-02.
 */
const compactStyle: Plugin = {
  name: 'compact-style',
  setup(b) {
    b.onLoad({ filter: /lib[\\/]ui[\\/]style\.ts$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const start = source.indexOf('export const STYLE = `');
      const end = source.indexOf('`;', start + 22);
      if (start < 0 || end < 0) throw new Error(`compact-style: STYLE not found in ${args.path}`);
      const css = source
        .slice(start + 22, end)
        .replace(/\n\s*/g, ' ')
        .replace(/\s*([;{}])\s*/g, '$1')
        .trim();
      return { contents: source.slice(0, start + 22) + css + source.slice(end), loader: 'ts' };
    });
  },
};

/**
 * The OpenAPI document and the /docs page are functions of the routes' specs alone (no configuration, no
 * request), so the Worker bundles serve them as Workers static assets the build writes
 * (`buildReferenceAssets`), and lib/http/routes/reference.ts, which makes them, becomes
 * lib/http/routes/reference-edge.ts there: neither the document's generator nor the page's is in the
 * Worker's code (7.8 KB gzip of the R2-only bundle on 2026-12-06: 120,016 -> about 112,200 B; from
 * 2026-12-04 the bundles baked only the document's JSON Schemas and assembled the rest in the Worker).
 * zod's JSON Schema converter (zod/v4/core/json-schema-processors.js and to-json-schema.js), which only
 * the document's generator calls, becomes stubs that throw. The schemas' own JSON Schema methods would
 * reach those stubs, and so would zod's getters of a schema's bounds (`.minLength`, `.maxValue`,
 * `.format`, `.isInt`, …); lib/ and functions/ call none of them (test/functions/worker.test.ts checks the
 * methods, and that the Workers answer /openapi.json and /docs exactly as the Node server does; a getter
 * would throw in the Worker tests).
 */
export const edgeReference: Plugin = {
  name: 'edge-reference',
  setup(b) {
    b.onResolve({ filter: /^\.\/reference\.js$/ }, (args) => {
      if (!/lib[\\/]http[\\/]routes[\\/]index\.ts$/.test(args.importer)) return undefined;
      return { path: join(root, 'lib', 'http', 'routes', 'reference-edge.ts') };
    });
    b.onLoad(
      { filter: /zod[\\/]v4[\\/]core[\\/](json-schema-processors|to-json-schema)\.js$/ },
      (args) => {
        const source = readFileSync(args.path, 'utf8');
        // Every export keeps its name (a missing one fails the build): a function that answers one that throws.
        const names = [...source.matchAll(/^export (?:const|function) (\w+)/gm)].map((m) => m[1]!);
        const aliases = [...source.matchAll(/^export \{ (\w+) as (\w+) \};/gm)];
        if (!names.includes(args.path.includes('processors') ? 'toJSONSchema' : 'processSchema'))
          throw new Error(`edge-reference: zod's JSON Schema exports not found in ${args.path}`);
        // Each throws when called; the two that zod calls to make a schema's methods (its `~standard`
        // getter makes them on read) make methods that throw. Getters of zod that read a schema's checks
        // through `aggregateChecks` (`.minLength`, `.maxValue`, …) throw too, rather than answer null.
        const fail = "() => { throw new Error('JSON Schema is not in this bundle'); }";
        const stub = (n: string) =>
          /^create\w*JSONSchemaMethod$/.test(n) ? `() => ${fail}` : fail;
        const contents = [
          ...names.map((n) => `export const ${n} = ${stub(n)};`),
          ...aliases.map((m) => `export { ${m[1]} as ${m[2]} };`),
        ].join('\n');
        return { contents, loader: 'js' };
      },
    );
  },
};

/**
 * The OpenAPI document and the /docs page as Workers static assets: `openapi.json` and `docs.html` in
 * `dir` (Cloudflare serves `docs.html` at /docs, and miniflare does as the Worker tests run it).
 */
export async function buildReferenceAssets(dir = join(root, 'dist', 'assets')): Promise<void> {
  const { apiDocument } = await import('../lib/http/routes/index.js');
  const { docsPage } = await import('../lib/http/docs.js');
  const doc = apiDocument();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
  writeFileSync(join(dir, 'docs.html'), docsPage(doc));
}

/**
 * A Workers bundle: one ES module for workerd. `s3: true` (the default) is functions/worker.ts, with the
 * fetch-based S3 client for SATCHEL_STORAGE=s3; `s3: false` is functions/worker-r2.ts, R2 binding only.
 * esbuild bundles and minifies; terser then renames the identifiers again (about 3 KB smaller gzipped)
 * and runs three passes of its default, safe compression (1,345 B smaller for the R2-only bundle on
 * 2026-12-02 with one pass, 187 B more with the second, 17 B more with the third at 10:28 UTC), which
 * has a 120,000 B budget, and with `pure_getters` (112 B on 2026-12-03): a property read whose value is
 * unused may go. Nothing here reads a property for a getter's side effect (lib/ and functions/ hold no
 * such statement; zod's lazy getters only compute what a later read would), and the Worker tests run the
 * bundles in workerd,
 * issue 6. Its names are chosen by frequency, which gzip
 * rewards. The Worker tests run the bundles this builds in workerd.
 */
export async function buildWorker(
  outfile = join(root, 'dist', 'worker', 'worker.js'),
  options: { s3?: boolean; assets?: string } = {},
): Promise<string> {
  const assets = options.assets ?? join(dirname(outfile), 'assets');
  const ui = await buildUiAssets(assets);
  writeFileSync(join(assets, 'ui', 'pages.json'), JSON.stringify(await uiPages(ui)));
  await buildReferenceAssets(assets);
  const result = await build({
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
    // Code only long-lived runtimes run (group commit's queue) is left out (lib/sessions/key-queue.ts).
    define: { 'globalThis.SATCHEL_SHORT_LIVED': 'true' },
    plugins: [
      pureJsXmlParser,
      unusedHonoHelpers,
      unusedHonoMembers,
      noZodJit,
      noZodMemoizer,
      zodUtilUsedOnly,
      zodErrorSources,
      compactStyle,
      usedZodFormats,
      edgeReference,
      edgeSpecProse,
      edgeUi,
    ],

    logLevel: 'warning',
    write: false,
    metafile: true,
  });
  // unusedHonoMembers read the names Hono's own modules use in HONO_MODULES: one more (a new Hono) fails.
  for (const input of Object.keys(result.metafile.inputs)) {
    const m = /hono\/dist\/(.+)$/.exec(input.replace(/\\/g, '/'));
    if (m && !HONO_MODULES.includes(m[1]!))
      throw new Error(
        `buildWorker: Hono module ${m[1]} is not in HONO_MODULES (unusedHonoMembers)`,
      );
  }
  // esbuild warns of an import from a module with no such export (our own code's namespace imports;
  // not zod's own, and not a named import, which fails the build): it is a bug, not a warning.
  const undefinedImport = result.warnings.find((w) => /always be undefined/.test(w.text));
  if (undefinedImport) throw new Error(`buildWorker: ${undefinedImport.text}`);
  const renamed = await minify(result.outputFiles[0]!.text, {
    module: true,
    ecma: 2020,
    // keep_fargs, unsafe_comps, unsafe_arrows: 137 B (2026-12-07, for review s62h's redaction fix). Nothing
    // bundled reads a function's `length` (Hono only names it so in a comment), compares objects by
    // valueOf with side effects, or calls with `new` a function that uses no `this`.
    // passes 5 rather than 3: 40 B (2026-12-07, for review s63b's lease fix). unsafe: 161 B (for the s63
    // search and deletion fixes): `String(x)` and `x.toString()` become `"" + x`, which differ only for a
    // Symbol (nothing bundled converts one: JSON has none) and a null receiver (a TypeError becomes text),
    // and `new` goes from built-ins that act the same when called (Error, RegExp, Array of several items).
    // unsafe_math and unsafe_symbols: 94 B (2026-12-07, for review s64's redaction and parts fixes). The
    // first only turns `Number(x)` into `+x` in the R2-only bundle, which differ for a BigInt alone (nothing
    // there passes one: JSON has none, and zod's coercion is unused); not in the R2 + S3 bundle, where the
    // AWS SDK's CRC64 table builds on `Number(bigint)` (review s64h). The second drops Symbol descriptions,
    // which nothing reads (symbols are used as keys and markers).
    compress: {
      passes: 5,
      unsafe: true,
      unsafe_math: options.s3 === false,
      unsafe_symbols: true,
      pure_getters: true,
      keep_fargs: false,
      unsafe_comps: true,
      unsafe_arrows: true,
    },
    mangle: { properties: { regex: await privateMembers(result.outputFiles[0]!.text) } },
    format: { comments: false },
  });
  mkdirSync(dirname(outfile), { recursive: true });
  writeFileSync(outfile, renamed.code!);
  return outfile;
}

/**
 * The session browser's two pages as the Worker serves them, rendered here (lib/ui/page.ts) with the
 * assets' versions, for `ui/pages.json` among the static assets (lib/ui/edge.ts reads it).
 */
async function uiPages(ui: PageAssetsUrls): Promise<Record<'list' | 'session', string>> {
  const { renderPage } = await import('../lib/ui/page.js');
  return { list: renderPage('list', ui), session: renderPage('session', ui) };
}

/**
 * The routes' specs carry the OpenAPI document's prose (`summary`, `description`, `rawBody` and the text of
 * each `problem(…)` answer), which in the Worker
 * bundles nothing reads: the document and the /docs page are static assets made from lib/ by
 * `buildReferenceAssets`. In the specs' modules (lib/http/spec.ts, lib/http/routes/) those properties go
 * when their value is text (a string, a template without `${…}`, or such joined with `+`), through
 * TypeScript's parser rather than a pattern. About 2.5 KB gzip of the R2-only bundle on 2026-12-07, when
 * fixes for Cloudflare's operation limit (review s60b) took it past its 120,000 B budget; the problem
 * answers' texts and `rawBody` about 760 B more later that day, for redaction's table and Terraform rules.
 */
/** A route spec's fields only the OpenAPI document reads (lib/http/openapi.ts, docs.ts), whatever their value. */
const DOCUMENT_ONLY = new Set(['responses', 'parameters', 'operationId', 'tag']);
/** lib/http/spec.ts's constants only those fields use (their zod calls would stay in the bundle unused). */
const DOCUMENT_TABLES = new Set(['parameters', 'P', 'bodyErrors']);

export const edgeSpecProse: Plugin = {
  name: 'edge-spec-prose',
  setup(b) {
    b.onLoad({ filter: /lib[\\/]http[\\/](spec|routes[\\/]\w+)\.ts$/ }, async (args) => {
      const { default: ts } = await import('typescript');
      const source = readFileSync(args.path, 'utf8');
      const file = ts.createSourceFile(args.path, source, ts.ScriptTarget.Latest, true);
      const prose = (e: TS.Expression): boolean =>
        ts.isStringLiteral(e) ||
        ts.isNoSubstitutionTemplateLiteral(e) ||
        (ts.isParenthesizedExpression(e) && prose(e.expression)) ||
        (ts.isBinaryExpression(e) &&
          e.operatorToken.kind === ts.SyntaxKind.PlusToken &&
          prose(e.left) &&
          prose(e.right));
      // [start, end, what replaces it) of each such property with its trailing comma, and of each
      // problem()'s text, replaced from the end backwards.
      const cuts: [number, number, string][] = [];
      const visit = (node: TS.Node): void => {
        if (
          ts.isPropertyAssignment(node) &&
          ts.isIdentifier(node.name) &&
          (['description', 'summary', 'rawBody'].includes(node.name.text)
            ? prose(node.initializer)
            : DOCUMENT_ONLY.has(node.name.text))
        ) {
          const end = source[node.end] === ',' ? node.end + 1 : node.end;
          cuts.push([node.getStart(file), end, '']);
          return;
        }
        // The document's tables of parameters and problem answers, which only the cut fields named.
        if (
          ts.isVariableDeclaration(node) &&
          ts.isIdentifier(node.name) &&
          DOCUMENT_TABLES.has(node.name.text) &&
          node.initializer
        ) {
          cuts.push([node.initializer.getStart(file), node.initializer.end, '{} as never']);
          return;
        }
        const text = ts.isCallExpression(node) ? node.arguments[0] : undefined;
        if (
          text &&
          ts.isIdentifier((node as TS.CallExpression).expression) &&
          ((node as TS.CallExpression).expression as TS.Identifier).text === 'problem' &&
          prose(text)
        )
          cuts.push([text.getStart(file), text.end, "''"]);
        ts.forEachChild(node, visit);
      };
      visit(file);
      let contents = source;
      for (const [start, end, put] of cuts.reverse())
        contents = contents.slice(0, start) + put + contents.slice(end);
      return { contents, loader: 'ts' };
    });
  },
};

/**
 * In the Worker bundles, the session browser's routes are lib/ui/edge.ts: the pages only, their script,
 * stylesheet and icon being Workers static assets (`buildUiAssets`).
 */
const edgeUi: Plugin = {
  name: 'edge-ui',
  setup(b) {
    b.onResolve({ filter: /^\.\.\/ui\/index\.js$/ }, (args) => {
      if (!/lib[\\/]http[\\/]app\.ts$/.test(args.importer)) return undefined;
      return { path: join(root, 'lib', 'ui', 'edge.ts') };
    });
  },
};

/**
 * The assets' `_headers` (Cloudflare's format, which wrangler uploads as the assets' configuration and
 * miniflare reads too, not served itself): the session browser's script, stylesheet and icon get the
 * security headers the Node server and Lambda give them (`secure` in lib/ui/shell.ts). Until 2026-12-06
 * the Worker served them with none (review s58d). It applies to the static assets only: the pages, which
 * the Worker serves, set their own.
 */
export function uiAssetHeaders(csp: string, docs: Readonly<Record<string, string>>): string {
  return [
    '/ui/*',
    `  Content-Security-Policy: ${csp}`,
    '  X-Content-Type-Options: nosniff',
    '  Referrer-Policy: no-referrer',
    '  X-Frame-Options: DENY',
    // The /docs page (docs.html, a static asset too) gets the headers the Node server gives it.
    '/docs*',
    ...Object.entries(docs).map(([name, value]) => `  ${name}: ${value}`),
    '',
  ].join('\n');
}

/**
 * The session browser's script, stylesheet and icon as Workers static assets, in `dist/assets/ui/`
 * (wrangler.toml `[assets]` uploads the folder, and Cloudflare serves them before the Worker runs): the
 * script as a minified bundle of lib/ui/index.ts makes it (its functions' minified text), the stylesheet
 * on one line. Answers the URLs the pages name, versioned by their text. Out of the Worker's code, the
 * page script no longer counts against its bundle budget (about 9 KB gzip of the R2-only bundle).
 */
export async function buildUiAssets(dir = join(root, 'dist', 'assets')): Promise<PageAssetsUrls> {
  const tmp = mkdtempSync(join(tmpdir(), 'satchel-ui-'));
  const outfile = join(tmp, 'ui.cjs');
  try {
    await build({
      entryPoints: [join(root, 'lib', 'ui', 'index.ts')],
      outfile,
      bundle: true,
      format: 'cjs',
      platform: 'node',
      target: 'es2022',
      minify: true,
      legalComments: 'none',
      plugins: [compactStyle],
      logLevel: 'warning',
    });
    const ui = createRequire(import.meta.url)(outfile) as {
      clientScript(): string;
      STYLE: string;
    };
    const { ICON, UI_CSP, fingerprint } = await import('../lib/ui/shell.js');
    const { DOCS_HEADERS } = await import('../lib/http/docs.js');
    const script = ui.clientScript();
    mkdirSync(join(dir, 'ui'), { recursive: true });
    writeFileSync(join(dir, '_headers'), uiAssetHeaders(UI_CSP, DOCS_HEADERS));
    writeFileSync(join(dir, 'ui', 'app.js'), script);
    writeFileSync(join(dir, 'ui', 'app.css'), ui.STYLE);
    writeFileSync(join(dir, 'ui', 'app.svg'), ICON);
    return {
      script: `/ui/app.js?v=${fingerprint(script)}`,
      style: `/ui/app.css?v=${fingerprint(ui.STYLE)}`,
    };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

interface PageAssetsUrls {
  script: string;
  style: string;
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

/** The client package's folder: its package.json, bin and (built here) dist/. */
export const clientPackageDir = join(root, 'packages', 'client');

/** The package's entries: subpath export → source file under lib/. */
const clientEntries: Record<string, string> = {
  'client/index': 'lib/client/index.ts',
  'adapters/openai-agents': 'lib/adapters/openai-agents.ts',
  'adapters/ai-sdk': 'lib/adapters/ai-sdk.ts',
};

/**
 * The client package (packages/client/dist, or `dir`/dist for a copy of packages/client elsewhere): the client and the adapters as ES modules for any runtime
 * with fetch (shared code in chunks/, the frameworks left to the user's install), their declarations,
 * the CLI for Node, and the LICENSE. The declarations are tsc's, except lib/client/types.ts, whose types
 * are inferred from the server's zod schemas: those are written out expanded, so the package needs no
 * zod and ships nothing of the server.
 */
export async function buildClientPackage(dir = clientPackageDir): Promise<string> {
  const dist = join(dir, 'dist');
  rmSync(dist, { recursive: true, force: true });
  await build({
    entryPoints: Object.fromEntries(
      Object.entries(clientEntries).map(([out, src]) => [out, join(root, src)]),
    ),
    outdir: dist,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    chunkNames: 'chunks/[name]-[hash]',
    external: ['@openai/agents', 'ai'],
    legalComments: 'none',
    logLevel: 'warning',
  });
  execFileSync(
    process.execPath,
    [
      join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
      '-p',
      join(clientPackageDir, 'tsconfig.json'),
      '--outDir',
      dist,
    ],
    { stdio: 'inherit' },
  );
  writeFileSync(join(dist, 'client', 'types.d.ts'), await expandedClientTypes());
  rmSync(join(dist, 'model'), { recursive: true, force: true });
  await buildCli(join(dist, 'cli.js'));
  copyFileSync(join(root, 'LICENSE'), join(dir, 'LICENSE'));
  return dist;
}

/**
 * What the package's client adds to a browser or Worker bundle: packages/client/dist/client/index.js
 * bundled for the browser and minified, as bytes and gzip bytes, with what it pulls in.
 */
export async function clientBundleSize(dist = join(clientPackageDir, 'dist')) {
  const out = await build({
    entryPoints: [join(dist, 'client', 'index.js')],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const data = out.outputFiles[0]!.contents;
  return {
    bytes: data.byteLength,
    gzip: gzipSync(data).byteLength,
    inputs: Object.keys(out.metafile.inputs).map((p) => relative(root, resolvePath(p))),
  };
}

/** lib/client/types.ts as declarations with every type written out (no zod, no import of lib/model). */
async function expandedClientTypes(): Promise<string> {
  const ts = (await import('typescript')).default;
  const file = join(root, 'lib', 'client', 'types.ts');
  const program = ts.createProgram([file], {
    strict: true,
    noUncheckedIndexedAccess: true,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(file)!;
  const flags =
    ts.TypeFormatFlags.NoTruncation |
    ts.TypeFormatFlags.InTypeAlias |
    ts.TypeFormatFlags.UseStructuralFallback;
  const out = ["// The client's request and response types (generated from lib/client/types.ts)."];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement)) continue;
    if (!ts.isTypeAliasDeclaration(statement)) {
      out.push(statement.getFullText(source));
      continue;
    }
    const comments = source.text.slice(statement.getFullStart(), statement.getStart(source));
    const exported = statement.modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword);
    const type = checker.typeToString(checker.getTypeAtLocation(statement.name), undefined, flags);
    out.push(`${comments}${exported ? 'export ' : ''}type ${statement.name.text} = ${type};`);
  }
  const text = `${out.join('\n')}\n`;
  if (/\bzod\b|\$Zod|lib\/model|\.\.\/model/.test(text))
    throw new Error('client types still name zod or the model after expansion');
  return text;
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
    console.log(
      `built ${relative(process.cwd(), file)}: ${kib(bytes)}, gzip ${kib(gzip)} (${gzip} B)`,
    );
  };
  if (what === 'worker') {
    // The bundles in a folder of their own, the assets beside it: with `no_bundle`, wrangler uploads every
    // file under the entry's folder that its module rules match (`*.html` as text) as part of the Worker,
    // so `dist/assets/docs.html` would count in its size (review s56d).
    const assets = join(root, 'dist', 'assets');
    report(await buildWorker(join(root, 'dist', 'worker', 'worker.js'), { assets }));
    report(await buildWorker(join(root, 'dist', 'worker', 'worker-r2.js'), { s3: false, assets }));
    // The session browser's static assets beside them (not in the bundles' size).
    for (const asset of ['app.js', 'app.css']) report(join(root, 'dist', 'assets', 'ui', asset));
  } else if (what === 'lambda') {
    const bundle = await buildLambda();
    report(bundle);
    const file = packLambda(bundle);
    console.log(
      `packed ${relative(process.cwd(), file)} (${kib(readFileSync(file).byteLength)}): index.mjs, handler index.handler`,
    );
  } else if (what === 'cli') {
    report(await buildCli());
  } else if (what === 'client') {
    const dist = await buildClientPackage();
    for (const out of Object.keys(clientEntries)) report(join(dist, `${out}.js`));
  } else if (what === 'client-size') {
    // Measured on the built package (run `client` first); written to bench/results.json, "client".
    const size = await clientBundleSize();
    const resultsFile = join(root, 'bench', 'results.json');
    const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as Record<string, unknown>;
    results.client = {
      date: new Date().toISOString(),
      command: 'npm run bench:client',
      what: 'the package entry "satchel" (dist/client/index.js) bundled for browsers and Workers, minified',
      bytes: size.bytes,
      gzip: size.gzip,
      target_gzip: 15 * 1024,
      inputs: size.inputs,
    };
    writeFileSync(resultsFile, `${JSON.stringify(results, null, 2)}\n`);
    console.log(`client bundle: ${kib(size.bytes)}, gzip ${kib(size.gzip)} (target 15.0 KiB)`);
  } else {
    console.error('usage: tsx scripts/build.ts worker|lambda|cli|client|client-size');
    process.exit(2);
  }
}

/**
 * The names of lib/'s and functions/' private class members that the bundle reads and writes only as
 * `this.<name>` and declares only in classes, for terser to shorten (`mangle.properties`): about 1.5 KB
 * gzip of the R2-only bundle on 2026-12-08, for review s68's redaction and audit fixes. A name goes
 * unshortened wherever the bundle holds it otherwise, by its syntax (not by a pattern): read or written
 * on anything but `this` (another object's property, a platform's, parsed JSON's), a key of an object
 * literal or of a destructuring (what is stored, sent or read as JSON), or a string (a computed access, an
 * `in`). Terser leaves the DOM's and the built-ins' property names alone, as ever.
 */
async function privateMembers(code: string): Promise<RegExp> {
  const { default: ts } = await import('typescript');
  const names = new Set<string>();
  const visitSource = (node: TS.Node): void => {
    const modifiers = ts.canHaveModifiers(node) ? (ts.getModifiers(node) ?? []) : [];
    const named = (node as { name?: TS.Node }).name;
    if (
      modifiers.some((m) => m.kind === ts.SyntaxKind.PrivateKeyword) &&
      named &&
      ts.isIdentifier(named)
    )
      names.add(named.text);
    ts.forEachChild(node, visitSource);
  };
  for (const dir of ['lib', 'functions'])
    for (const file of readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' }))
      if (file.endsWith('.ts'))
        visitSource(
          ts.createSourceFile(
            file,
            readFileSync(join(root, dir, file), 'utf8'),
            ts.ScriptTarget.Latest,
            true,
          ),
        );
  const unsafe = new Set<string>();
  const nameOf = (n: TS.Node | undefined) =>
    n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n))
      ? n.text
      : undefined;
  const visit = (node: TS.Node): void => {
    let name: string | undefined;
    if (ts.isPropertyAccessExpression(node)) {
      if (node.expression.kind !== ts.SyntaxKind.ThisKeyword) name = node.name.text;
    } else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) name = node.text;
    else if (ts.isObjectLiteralElement(node) && ts.isObjectLiteralExpression(node.parent))
      name = nameOf(node.name);
    else if (ts.isBindingElement(node) && ts.isObjectBindingPattern(node.parent))
      name = nameOf(node.propertyName ?? node.name);
    if (name !== undefined) unsafe.add(name);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('bundle.js', code, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS));
  const kept = [...names].filter((n) => !unsafe.has(n)).sort();
  if (kept.length < 100) throw new Error(`private-members: only ${kept.length} names to shorten`);
  return new RegExp(`^(?:${kept.join('|')})$`);
}
