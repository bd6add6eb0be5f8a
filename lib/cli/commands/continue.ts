import { SatchelApiError } from '../../client/errors.js';
import { externalRefs, stringOpt } from '../args.js';
import type { Command } from '../command.js';
import { inert } from '../render.js';
import {
  AdvisedError,
  EXIT,
  idempotencyKeyOption,
  keyedWrite,
  optionWords,
  positionalWords,
  shellQuote,
} from '../io.js';
import {
  NO_SESSIONS_ADVICE,
  REF_HELP,
  REF_OPTION,
  refArgs,
  sessionIdArg,
  words,
} from './session.js';

export const continueCommand: Command = {
  name: 'continue',
  summary: 'add a message to a session (the latest without --id) and run a model turn',
  help: `satchel continue [--id ID] "message" [--idempotency-key KEY] [--external-ref …] [--json]

Stores the message as a user message in the session (the most recently updated one without --id),
then, when the server has a model configured, runs one model turn and prints its reply. Without a model
the message is only stored.

Every continue carries an Idempotency-Key, so the client's own retries never store the message twice.
When the model turn fails (502) or another device's turn is running (409), the message is stored
already; the error prints the command that runs the turn again with the same key, which does not store
the message a second time. The same key with a different message is refused (422).

  --id ID                 the session (default: the latest)
  --idempotency-key KEY   1-255 visible ASCII characters (default: a new random key)
${REF_HELP}
  --json                  the server's answer: the write receipt, model_turn, reply`,
  options: { ...REF_OPTION, id: { type: 'string' }, 'idempotency-key': { type: 'string' } },
  async run(ctx) {
    const message = words(ctx.args.positionals, '"message"');
    const refs = externalRefs(ctx.args.values);
    const given = sessionIdArg(stringOpt(ctx.args.values, 'id'), '--id');
    const id = given ?? 'latest';
    const key =
      idempotencyKeyOption(stringOpt(ctx.args.values, 'idempotency-key')) ?? crypto.randomUUID();
    // The same command with the same key: runs what is missing without storing the message twice.
    const again = [
      'satchel',
      'continue',
      ...(given !== undefined ? optionWords('--id', given) : []),
      ...optionWords('--idempotency-key', key),
      ...refArgs(ctx.args.values),
      ...positionalWords(message), // a message that starts with '-' stays the message
    ];
    let answer;
    try {
      answer = await keyedWrite(
        ctx
          .client()
          .continue(
            id,
            { message, ...(refs.length ? { external_refs: refs } : {}) },
            { idempotencyKey: key },
          ),
        again,
      );
    } catch (err) {
      if (!SatchelApiError.is(err)) throw err;
      if (err.status === 404 && given === undefined)
        throw new AdvisedError(err, NO_SESSIONS_ADVICE);
      // Only when the message was stored: a 409 saying it was removed meanwhile offers no repeat.
      const stored = err.detail.includes('your message was stored (');
      if ((err.status === 502 || err.status === 409) && stored) {
        // The server's advice speaks HTTP ("retry with the same Idempotency-Key"); this is how, here.
        const detail = err.detail.replace(/\s*Retry with the same Idempotency-Key.*$/s, '');
        // No "in about N s" after Retry-After: that is when to ask again, not when the other turn (or the
        // lease a stopped server left) ends (until 2026-12-06 it said 5 s of a lease with 150 s left).
        const when =
          err.status === 409
            ? 'once the other turn is done'
            : /^the server is stopping/.test(detail)
              ? 'when the server is back'
              : 'when the model is reachable again';
        // A 4xx from the model (not 408 or 429, which pass) is refused again until a setting changes:
        // waiting for the model to be "reachable again" never helped (review s64g).
        // A 404's detail says to check SATCHEL_MODEL_URL itself (review s64j).
        const refused = err.status === 502 && /answered HTTP 4(?!04|08|29)\d\d\b/.test(detail);
        const lead = refused
          ? "The model refused the request: check the model server's settings (the Satchel server's " +
            "log has the model's answer). Then, to run the turn"
          : `To run the turn ${when}`;
        throw new AdvisedError(
          err,
          `${lead} without storing the message twice:\n  ${again.map(shellQuote).join(' ')}`,
          detail,
        );
      }
      throw err;
    }
    if (ctx.json) ctx.printJson(answer);
    // The reply is stored session text, steerable by what the model read: inert, as `session show`.
    else if (answer.model_turn) ctx.print(`${inert(answer.reply ?? '')}\n`);
    else
      ctx.print(
        `Stored in session ${answer.id} (revision ${answer.revision}); ` +
          'no model turn: the server has no model configured\n',
      );
    return EXIT.ok;
  },
};
