/**
 * The zod schema of a suite config, derived from the shape in `_shape.ts`:
 * what names an invalid config's first problem. Only `schema.ts` and the
 * tests import it, so a run whose config is valid never loads zod.
 *
 * @module
 */

import { z } from "zod";
import type { SuiteConfig } from "./types.ts";
import { type Field, type Shape, SUITE, SUITE_LISTED } from "./_shape.ts";

function fields(shape: Readonly<Record<string, Field>>): z.ZodRawShape {
  return Object.fromEntries(
    Object.entries(shape).map(([key, field]) => {
      const schema = toZod(field.shape);
      return [key, field.optional ? schema.optional() : schema];
    }),
  );
}

/** The zod schema a shape stands for. */
function toZod(shape: Shape): z.ZodType {
  switch (shape.kind) {
    case "string": {
      let schema = z.string();
      if (shape.min !== undefined) schema = schema.min(shape.min);
      if (shape.pattern !== undefined) {
        schema = schema.regex(shape.pattern, shape.message);
      }
      return schema;
    }
    case "url":
      return z.url();
    case "number": {
      let schema = z.number();
      if (shape.int) schema = schema.int();
      if (shape.positive) schema = schema.positive();
      if (shape.min !== undefined) schema = schema.min(shape.min);
      if (shape.max !== undefined) schema = schema.max(shape.max);
      return schema;
    }
    case "boolean":
      return z.boolean();
    case "unknown":
      return z.unknown();
    case "enum":
      return z.enum(shape.values as [string, ...string[]]);
    case "list": {
      const schema = z.array(toZod(shape.of));
      return shape.min !== undefined ? schema.min(shape.min) : schema;
    }
    case "record":
      return z.record(z.string(), toZod(shape.of));
    case "mapping":
      return z.strictObject(fields(shape.fields));
    case "union":
      return z.union(shape.of.map(toZod) as [z.ZodType, ...z.ZodType[]]);
    case "byType": {
      // Types that share a mapping are one option, `type: z.enum([...])`.
      const options = new Map<Shape, string[]>();
      for (const [type, mapping] of Object.entries(shape.types)) {
        const types = options.get(mapping) ?? [];
        options.set(mapping, [...types, type]);
      }
      const schemas = [...options].map(([mapping, types]) =>
        z.strictObject({
          type: types.length === 1 ? z.literal(types[0]!) : z.enum(types),
          ...fields((mapping as Shape & { kind: "mapping" }).fields),
        })
      );
      return z.discriminatedUnion(
        "type",
        schemas as [(typeof schemas)[number], ...typeof schemas],
      );
    }
  }
}

/** A suite config as `types.ts` types it, from the shape `_check.ts` checks too. */
export const SuiteSchema: z.ZodType<SuiteConfig> = toZod(
  SUITE,
) as z.ZodType<SuiteConfig>;

/** A suite config with `datasets:`, from the shape `_check.ts` checks too. */
export const SuiteListedSchema: z.ZodType<SuiteConfig> = toZod(
  SUITE_LISTED,
) as z.ZodType<SuiteConfig>;
