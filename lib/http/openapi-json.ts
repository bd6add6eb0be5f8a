import * as z from 'zod';

/**
 * The JSON Schemas of the OpenAPI document, from zod: the named component schemas (referring to each
 * other by component name) and each shared parameter's schema. The one part of the document that needs
 * zod's JSON Schema converter. The Worker bundles serve the whole document as a static asset the build
 * writes (scripts/build.ts `buildReferenceAssets`): neither this module nor the converter is in them.
 */
export function schemaJson(
  inputs: Record<string, [z.ZodType, string]>,
  outputs: Record<string, [z.ZodType, string]>,
  parameters: Record<string, { schema: z.ZodType }>,
): { schemas: Record<string, Record<string, unknown>>; parameters: Record<string, unknown> } {
  return {
    schemas: { ...componentSchemas(outputs, 'output'), ...componentSchemas(inputs, 'input') },
    parameters: Object.fromEntries(
      Object.entries(parameters).map(([id, p]) => [id, parameterSchema(p.schema)]),
    ),
  };
}

/** zod → JSON Schemas for a set of named schemas, referring to each other by component name. */
function componentSchemas(
  named: Record<string, [z.ZodType, string]>,
  io: 'input' | 'output',
): Record<string, Record<string, unknown>> {
  const registry = z.registry<{ id: string }>();
  for (const [id, [schema]] of Object.entries(named)) registry.add(schema, { id });
  const { schemas } = z.toJSONSchema(registry, {
    io,
    uri: (id) => `#/components/schemas/${id}`,
    unrepresentable: 'throw',
    override: formatOnly,
  });
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}

/** One parameter's JSON Schema (zod input: what a client sends). */
function parameterSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _s, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    override: formatOnly,
  }) as Record<string, unknown>;
  return rest;
}

/**
 * A `date-time` says what zod's 288-character pattern for it says (RFC 3339 with an offset): the pattern
 * goes, which keeps the document readable and the Worker bundles smaller.
 */
function formatOnly(ctx: { jsonSchema: Record<string, unknown> }): void {
  if (ctx.jsonSchema['format'] === 'date-time') delete ctx.jsonSchema['pattern'];
}
