import type { TestProject } from 'vitest/node';
import { startRadosgw, type S3Target } from './radosgw.js';

declare module 'vitest' {
  export interface ProvidedContext {
    s3: Omit<S3Target, 'stop'>;
  }
}

let target: S3Target | undefined;

/** Starts one Ceph radosgw for the whole run (or uses S3_ENDPOINT when set) and stops it afterwards. */
export async function setup(project: TestProject) {
  const started = Date.now();
  target = await startRadosgw({ log: () => undefined });
  const { stop: _stop, ...s3 } = target;
  project.provide('s3', s3);
  console.log(`radosgw ready at ${s3.endpoint} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

export async function teardown() {
  await target?.stop();
}
