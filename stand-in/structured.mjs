// structuredAnswer: a value that matches a structured-output schema (the supported subset), built
// from what the model "knows" — so a scripted reply or the demo model can answer a request with a
// format without spelling out every field of the schema.
//
//   structuredAnswer(schema, facts = {}, prose = '')
//
// Objects get every property, required and optional. A property is `facts[name]` when facts has
// that name with a value that matches the property's schema; otherwise a default: the schema's
// const, its first enum value or its default (when it matches); else a string is a valid
// placeholder for its format (a date for `format: date`, …), `prose` when given, else '…'; a
// number or integer 0, a boolean false, null null, an array [] (one item when minItems is 1), and
// a nested object is built from the same facts (the fact of its name over them, when an object).
// A union (anyOf, or a list of types holding null) is a non-null branch whose properties the facts
// fill, else null when it allows null, else its first branch whose default matches. A `$ref` is
// resolved and allOf's branches merged. `pattern` is not generated: the prose is used when it
// matches, else the default above, which may not.

import { schemaMismatch } from './conforms.mjs';
import { has, isObject } from './values.mjs';

/** A valid value of each supported string format. */
const FORMAT_EXAMPLES = {
  'date-time': '2025-01-01T00:00:00Z',
  date: '2025-01-01',
  time: '00:00:00Z',
  duration: 'P1D',
  email: 'someone@example.com',
  hostname: 'example.com',
  uri: 'https://example.com/',
  ipv4: '192.0.2.1',
  ipv6: '2001:db8::1',
  uuid: '00000000-0000-4000-8000-000000000000',
};
const PLACEHOLDER = '…';

const fits = (schema, value, root) => schemaMismatch(schema, value, root) === null;

function resolve(root, ref) {
  const [kind, name] = ref.slice(2).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return root?.[kind]?.[name];
}

/** The schema with its `$ref` followed and its allOf branches merged into one. */
function flatten(schema, root, depth = 0) {
  if (!isObject(schema) || depth > 32) return {};
  let out = { ...schema };
  if (typeof out.$ref === 'string') {
    const { $ref, ...rest } = out;
    out = { ...flatten(resolve(root, $ref), root, depth + 1), ...rest };
  }
  if (Array.isArray(out.allOf)) {
    const { allOf, ...rest } = out;
    for (const branch of allOf.map((b) => flatten(b, root, depth + 1))) {
      const properties = { ...(rest.properties ?? {}), ...(branch.properties ?? {}) };
      const required = [...new Set([...(rest.required ?? []), ...(branch.required ?? [])])];
      Object.assign(rest, branch, { properties, required });
      if (Object.keys(properties).length === 0) delete rest.properties;
      if (required.length === 0) delete rest.required;
    }
    out = rest;
  }
  return out;
}

const typesOf = (schema) => (has(schema, 'type') ? (Array.isArray(schema.type) ? schema.type : [schema.type]) : []);
const allowsNull = (schema) => typesOf(schema).includes('null') || (Array.isArray(schema.anyOf) && schema.anyOf.some((b) => isObject(b) && typesOf(b).includes('null')));

/** The type to build when the schema allows several (the first that is not null), or one its keywords imply. */
function typeToBuild(schema) {
  const types = typesOf(schema);
  if (types.length > 0) return types.find((t) => t !== 'null') ?? 'null';
  if (has(schema, 'properties')) return 'object';
  if (has(schema, 'items')) return 'array';
  return 'null';
}

function stringFor(schema, prose, root) {
  if (typeof schema.format === 'string' && has(FORMAT_EXAMPLES, schema.format)) return FORMAT_EXAMPLES[schema.format];
  if (prose !== '' && fits(schema, prose, root)) return prose;
  return PLACEHOLDER;
}

/** Whether facts fill a property of the (object) schema: then a union prefers that branch to null. */
function usesFacts(raw, facts, root) {
  const schema = flatten(raw, root);
  const properties = isObject(schema.properties) ? schema.properties : {};
  return Object.entries(properties).some(([name, inner]) => has(facts, name) && facts[name] !== null && fits(inner, facts[name], root));
}

function build(raw, facts, prose, root, depth = 0) {
  const schema = flatten(raw, root);
  if (depth > 32) return null;
  if (has(schema, 'const')) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (has(schema, 'default') && fits(schema, schema.default, root)) return schema.default;
  if (Array.isArray(schema.anyOf)) return fromBranches(schema, facts, prose, root, depth);
  const types = typesOf(schema);
  if (types.length > 1 && types.includes('null') && !usesFacts(schema, facts, root)) return null;
  switch (typeToBuild(schema)) {
    case 'object': return objectFor(schema, facts, prose, root, depth);
    case 'array': return schema.minItems === 1 ? [build(schema.items ?? {}, facts, prose, root, depth + 1)] : [];
    case 'string': return stringFor(schema, prose, root);
    case 'integer':
    case 'number': return 0;
    case 'boolean': return false;
    default: return null;
  }
}

/** anyOf: a branch the facts fill, else null when allowed, else the first branch whose default fits. */
function fromBranches(schema, facts, prose, root, depth) {
  const branches = schema.anyOf.filter(isObject);
  const onlyNull = (b) => typesOf(b).length > 0 && typesOf(b).every((t) => t === 'null');
  const filled = branches.find((b) => !onlyNull(flatten(b, root)) && usesFacts(b, facts, root));
  if (filled !== undefined) return build(filled, facts, prose, root, depth + 1);
  if (allowsNull(schema)) return null;
  const built = branches.map((b) => build(b, facts, prose, root, depth + 1));
  return built.find((v) => fits(schema, v, root)) ?? built[0] ?? null;
}

/** A property's value: the fact of its name when it fits (a non-null branch of a union first), else a default. */
function propertyFor(name, schema, facts, prose, root, depth) {
  if (has(facts, name) && fits(schema, facts[name], root)) return facts[name];
  const inner = isObject(facts[name]) ? { ...facts, ...facts[name] } : facts;
  return build(schema, inner, prose, root, depth + 1);
}

function objectFor(schema, facts, prose, root, depth) {
  const out = {};
  for (const [name, inner] of Object.entries(isObject(schema.properties) ? schema.properties : {})) {
    out[name] = propertyFor(name, inner, facts, prose, root, depth);
  }
  return out;
}

/** A value that matches `schema`, filled from `facts` where they fit, `prose` for free text. */
export function structuredAnswer(schema, facts = {}, prose = '') {
  return build(schema, isObject(facts) ? facts : {}, typeof prose === 'string' ? prose : '', schema);
}
