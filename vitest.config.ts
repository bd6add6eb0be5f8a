import { defineConfig } from 'vitest/config';

// The AWS SDK warns once per process that its releases from 2027 need Node 22; the tests run on Node 20
// on purpose (the supported floor), so the warning says nothing here. Tests only: production keeps it.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    // Captured server logs are printed for a failing test only (test/support/setup.ts).
    setupFiles: ['test/support/setup.ts'],
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    // A passing run fits on a screen: a dot per test, then the summary; a failure is printed in full
    // with the server log captured during it. `--reporter=default` lists files, and tests past 10 s (the
    // default 300 ms lists a hundred tests on a busy two-core machine, which reads like trouble).
    reporters: ['dot'],
    slowTestThreshold: 10_000,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // radosgw and workerd are shared by the test files; two cores is what CI has.
    maxWorkers: 2,
  },
});
