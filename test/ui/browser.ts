import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type HTTPRequest, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Env } from '../../lib/server/config.js';
import { startSatchelServer, type RunningServer } from '../support/satchel-server.js';

/**
 * Driving Debian's Chromium for the session browser's tests. There is no skip: when Chromium cannot be
 * launched the test file fails, naming the install command (.ci/run installs it on a fresh machine).
 */

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots land here (ignored by git; CI keeps the folder as an artefact). */
export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '.artifacts');

/** Launches Chromium, or throws an error that says what is missing. */
export async function launchBrowser(): Promise<Browser> {
  try {
    return await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
    });
  } catch (err) {
    throw new Error(
      `[test/ui] cannot launch Chromium at ${CHROMIUM} (${err instanceof Error ? err.message : String(err)}). ` +
        'Install it with: apt-get install -y --no-install-recommends chromium (as .ci/run does), or set CHROMIUM_PATH.',
    );
  }
}

/**
 * One Chromium and one Satchel server (on a temporary local folder, SATCHEL_TOKENS=`tokens`, plus `env`)
 * for a test file: registers the beforeAll that starts both and the afterAll that closes both. Read them
 * inside a test (the getters throw before beforeAll has run).
 */
export function browserAndServer(tokens: string, env: Env = {}) {
  let browser: Browser | undefined;
  let srv: RunningServer | undefined;
  beforeAll(async () => {
    browser = await launchBrowser();
    srv = await startSatchelServer({ env: { SATCHEL_TOKENS: tokens, ...env } });
  });
  afterAll(async () => {
    await browser?.close();
    await srv?.close();
  });
  const started = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`[test/ui] no ${what}: beforeAll has not started it`);
    return value;
  };
  return {
    get browser(): Browser {
      return started('browser', browser);
    },
    get srv(): RunningServer {
      return started('server', srv);
    },
  };
}

export interface Watched {
  page: Page;
  /** Uncaught exceptions in the page. */
  errors: string[];
  /** Console lines about a CSP or Trusted Types violation. */
  violations: string[];
  /** alert/confirm/prompt dialogs opened by the page (each dismissed). */
  dialogs: string[];
}

/** A fresh page at the given width, recording errors, CSP violations and dialogs. */
export async function openPage(browser: Browser, width = 1280, height = 900): Promise<Watched> {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const watched: Watched = { page, errors: [], violations: [], dialogs: [] };
  page.on('pageerror', (err) => watched.errors.push(String((err as Error)?.message ?? err)));
  page.on('console', (msg) => {
    const text = msg.text();
    if (/Content Security Policy|Trusted Type|TrustedHTML|TrustedScript/i.test(text))
      watched.violations.push(text);
  });
  page.on('dialog', (d) => {
    watched.dialogs.push(d.message());
    void d.dismiss();
  });
  return watched;
}

/** Signs in through the form, as a person would (the token box gets focus on its own). */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.waitForSelector('#signin', { visible: true });
  await page.type('#token', token);
  await page.keyboard.press('Enter');
  await page.waitForSelector('#signin', { hidden: true });
}

/** The visible text of an element, failing when it is missing, hidden or empty: no test passes on a blank page. */
export async function visibleText(page: Page, selector: string): Promise<string> {
  const handle = await page.waitForSelector(selector, { visible: true, timeout: 10_000 });
  const text = await handle!.evaluate((el) => (el as HTMLElement).innerText);
  const box = await handle!.boundingBox();
  expect(box && box.width > 0 && box.height > 0, `${selector} has no area`).toBe(true);
  expect(text.trim().length, `${selector} shows no text`).toBeGreaterThan(0);
  return text;
}

/** Presses Tab until the focused element matches, then returns; fails after `max` presses. */
export async function tabTo(page: Page, selector: string, max = 120): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** Saves a full-page screenshot as a test artefact. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file as `${string}.png`, fullPage: true });
  return file;
}

const axeSource = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
);

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(
  page: Page,
): Promise<{ id: string; impact: string; help: string; nodes: string[] }[]> {
  await page.evaluate(axeSource);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<any> } }
    ).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => String(n.target)),
    }));
  });
  return (result as { id: string; impact: string; help: string; nodes: string[] }[]).filter(
    (v) => v.impact === 'serious' || v.impact === 'critical',
  );
}

/** A small API client for seeding and checking through the public API. */
export function apiClient(base: string, token: string | null) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return {
      status: res.status,
      etag: res.headers.get('etag'),
      json: text ? (JSON.parse(text) as any) : undefined,
      text,
    };
  };
}

/** A secret the default redaction rules catch (an OpenAI project key shape). */
export const FAKE_KEY = 'sk-proj-' + 'Qm9vZ2xlV2FudHNUb0tub3dXaGF0WW91QXJlRG9pbmdOb3c'.slice(0, 48);

/** A session with everything the transcript view must show: tool calls and results, reasoning, redactions, a wrapper, refs, a cap marker. */
export function richSession(task = 'Fix the flaky deploy pipeline') {
  const longResult = Array.from(
    { length: 120 },
    (_, i) => `line ${i + 1}: deploy step output ${'x'.repeat(30)}`,
  ).join('\n');
  return {
    task,
    model: 'gpt-test',
    provider: 'local',
    messages: [
      { role: 'system', content: 'You are a careful deploy agent.' },
      {
        role: 'user',
        content: `The deploy failed again. My key is ${FAKE_KEY}, please check the pipeline.`,
      },
      {
        role: 'system',
        content:
          '[satchel] 3 earlier message groups were removed to keep this session under its size limit.',
      },
      {
        role: 'assistant',
        content: 'Let me look at the pipeline file and the last run.',
        reasoning_content: 'The user pasted a key; I should not repeat it. First read deploy.yaml.',
        tool_calls: [
          {
            id: 'call_read',
            type: 'function',
            function: {
              name: 'read_file',
              arguments: JSON.stringify({ path: 'deploy.yaml', auth: FAKE_KEY }),
            },
          },
          {
            id: 'call_logs',
            type: 'function',
            function: { name: 'fetch_logs', arguments: 'last run, not json' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_read', content: 'stages:\n  - build\n  - deploy' },
      { role: 'tool', tool_call_id: 'call_logs', content: longResult },
      {
        role: 'user',
        content:
          'Here is the issue text:\n<untrusted_content_0123456789abcdef source="webhook:github">\nDeploy broke after merging #42; please roll back.\n</untrusted_content_0123456789abcdef>\nWhat do you think?',
      },
      { role: 'assistant', content: 'Rolling back the kubernetes deployment fixes it.' },
    ],
    external_refs: [
      { kind: 'repo', uri: 'https://github.com/acme/deploy', created_by: 'agent' },
      { kind: 'ticket', uri: 'jira://OPS-1234', read_only: true },
    ],
  };
}

/** Opens a session's page at `url` (a server's), signed in with `token`, once its write controls show. */
export async function openSessionPage(page: Page, url: string, id: string, token: string) {
  await page.goto(`${url}/ui/sessions/${encodeURIComponent(id)}`);
  await signIn(page, token);
  await page.waitForSelector('#actions', { visible: true });
}

/** A session of about 3.3 KB: one more message of 1,800 bytes makes a 5,000-byte cap drop older groups. */
export function nearCapMessages() {
  return [
    { role: 'system', content: 'sys' },
    { role: 'user', content: 'u0' },
    ...Array.from({ length: 4 }, (_, i) => ({
      role: 'assistant',
      content: `a${i} ${'x'.repeat(800)}`,
    })),
  ];
}

/** The first request `matches` picks is answered by the server at once and delivered 1.5 s later. */
export async function delayOnce(page: Page, matches: (r: HTTPRequest) => boolean): Promise<void> {
  await page.setRequestInterception(true);
  let delayed = false;
  page.on('request', (r) => {
    if (delayed || !matches(r)) return void r.continue();
    delayed = true;
    void fetch(r.url(), { headers: r.headers() }).then(async (res) => {
      const body = await res.text();
      const headers = Object.fromEntries(res.headers.entries());
      setTimeout(() => void r.respond({ status: res.status, headers, body }), 1500);
    });
  });
}
