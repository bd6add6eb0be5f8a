import { externalRefs, stringOpt } from '../args.js';
import type { Command } from '../command.js';
import { EXIT } from '../io.js';
import { REF_HELP, REF_OPTION, words } from './session.js';

export const continueCommand: Command = {
  name: 'continue',
  summary: 'add a message to a session (the latest without --id) and run a model turn',
  help: `satchel continue [--id ID] "message" [--external-ref …] [--json]

Stores the message as a user message in the session (the most recently updated one without --id),
then, when the server has a model configured, runs one model turn and prints its reply. Without a model
the message is only stored. A retry after a lost answer never stores the message twice (the request
carries an Idempotency-Key).

  --id ID           the session (default: the latest)
${REF_HELP}
  --json            the server's answer: the write receipt, model_turn, reply`,
  options: { ...REF_OPTION, id: { type: 'string' } },
  async run(ctx) {
    const message = words(ctx.args.positionals, '"message"');
    const refs = externalRefs(ctx.args.values);
    const id = stringOpt(ctx.args.values, 'id') ?? 'latest';
    const answer = await ctx.client().continue(id, { message, ...(refs.length ? { external_refs: refs } : {}) });
    if (ctx.json) ctx.printJson(answer);
    else if (answer.model_turn) ctx.print(`${answer.reply ?? ''}\n`);
    else ctx.print(`Stored in session ${answer.id} (revision ${answer.revision}); no model turn: the server has no model configured\n`);
    return EXIT.ok;
  },
};
