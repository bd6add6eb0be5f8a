import { StorageUnavailableError, type ObjectStore } from '../../lib/storage/port.js';

/**
 * A store whose PUTs of keys matching an armed pattern fail with StorageUnavailableError, once per pattern
 * (push a pattern to `armed`; it is taken off when it fails a PUT). Every other call passes through.
 */
export function failingPuts(inner: ObjectStore): { store: ObjectStore; armed: RegExp[] } {
  const armed: RegExp[] = [];
  const store = new Proxy(inner, {
    get(target, prop, recv) {
      const v = Reflect.get(target, prop, recv) as unknown;
      if (typeof v !== 'function') return v;
      if (prop !== 'put') return v.bind(target);
      return async (...args: unknown[]) => {
        const i = armed.findIndex((p) => p.test(String(args[0])));
        if (i >= 0) {
          armed.splice(i, 1);
          throw new StorageUnavailableError('injected');
        }
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, armed };
}
