import type * as z from 'zod';
import type { ContinueAnswer } from '../continue/continue.js';
import type { AuditRecord } from '../sessions/audit.js';
import type { SearchEngine, SearchHit } from '../search/engine.js';
import type {
  auditRecordSchema,
  continueAnswerSchema,
  healthSchema,
  searchHitSchema,
} from '../model/responses.js';

// The code's own types must stay what these schemas say (tsc fails here otherwise).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type ResponseSchemasMatchTheCode = [
  Holds<Same<z.output<typeof auditRecordSchema>, AuditRecord>>,
  Holds<Same<z.output<typeof continueAnswerSchema>, ContinueAnswer>>,
  Holds<Same<z.output<typeof searchHitSchema>, SearchHit>>,
  Holds<
    ReturnType<SearchEngine['health']> extends z.output<typeof healthSchema>['embeddings']
      ? true
      : false
  >,
];
