// The JSON Schema subset structured outputs accept (`output_config.format.schema`): the keywords
// the API supports, the ones it refuses and the limits on a schema's size. The API compiles the
// schema into a grammar, so anything it cannot compile is a 400 before the model runs; each
// refusal names the place in the schema, as the API's own words do ("…schema.properties.tags:
// For 'array' type, 'minItems' values other than 0 or 1 are not supported").

import { fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';

export const SCHEMA_TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean', 'null'];
export const STRING_FORMATS = ['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid'];
/** The documented limits, counted across the whole schema. */
export const MAX_OPTIONAL_PROPERTIES = 24;
export const MAX_UNION_PROPERTIES = 16;

const SUPPORTED = new Set([
  'type', 'enum', 'const', 'anyOf', 'allOf', '$ref', '$defs', 'definitions', 'default', 'description', 'title',
  'properties', 'required', 'additionalProperties', 'items', 'minItems', 'format', 'pattern',
]);

/** Refused keywords that belong to one type: the refusal names the type, as the API's does. */
const TYPED = {
  minimum: 'number', maximum: 'number', exclusiveMinimum: 'number', exclusiveMaximum: 'number', multipleOf: 'number',
  minLength: 'string', maxLength: 'string', contentEncoding: 'string', contentMediaType: 'string',
  maxItems: 'array', uniqueItems: 'array', contains: 'array', minContains: 'array', maxContains: 'array',
  prefixItems: 'array', unevaluatedItems: 'array', additionalItems: 'array',
  minProperties: 'object', maxProperties: 'object', patternProperties: 'object', propertyNames: 'object',
  dependentRequired: 'object', dependentSchemas: 'object', dependencies: 'object', unevaluatedProperties: 'object',
};

const isPrimitive = (v) => v === null || ['string', 'number', 'boolean'].includes(typeof v);
const shown = (v) => (typeof v === 'string' ? v : JSON.stringify(v));
const SUPPORTED_REFS = "only local references to '#/$defs/…' or '#/definitions/…' are";

/** The feature of a regular expression the grammar cannot hold, or null. */
export function unsupportedRegexFeature(pattern) {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      const next = pattern[i + 1] ?? '';
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) return 'backreferences';
      if (!inClass && (next === 'b' || next === 'B')) return 'word boundaries (\\b)';
      i++;
    } else if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    else if (c === '(' && !inClass && /^\?(=|!|<=|<!)/.test(pattern.slice(i + 1, i + 4))) return 'lookahead or lookbehind';
  }
  return null;
}

/** The type a typed keyword is refused for: the schema's own when it names one of that family. */
function typeFor(schema, family) {
  return family === 'number' && schema.type === 'integer' ? 'integer' : family;
}

/** Walks every schema below `schema`, refusing what the subset leaves out; fills `seen`. */
function walk(schema, at, pointer, seen) {
  if (!isObject(schema)) fail(`${at}: Input should be a valid dictionary`);
  for (const key of Object.keys(schema)) {
    if (SUPPORTED.has(key)) continue;
    if (has(TYPED, key)) fail(`${at}: For '${typeFor(schema, TYPED[key])}' type, '${key}' is not supported`);
    fail(`${at}: '${key}' is not supported`);
  }
  for (const key of ['description', 'title']) {
    if (has(schema, key) && typeof schema[key] !== 'string') fail(`${at}.${key}: Input should be a valid string`);
  }
  const types = has(schema, 'type') ? (Array.isArray(schema.type) ? schema.type : [schema.type]) : [];
  if (has(schema, 'type') && types.length === 0) fail(`${at}.type: a list of types must not be empty`);
  for (const t of types) {
    if (!SCHEMA_TYPES.includes(t)) fail(`${at}: type '${shown(t)}' is not supported (supported: ${SCHEMA_TYPES.join(', ')})`);
  }
  if ((types.includes('object') || has(schema, 'additionalProperties')) && schema.additionalProperties !== false) {
    fail(`${at}: For 'object' type, 'additionalProperties' must be explicitly set to false`);
  }
  if (has(schema, 'required') && !(Array.isArray(schema.required) && schema.required.every((r) => typeof r === 'string'))) {
    fail(`${at}.required: Input should be a valid list of strings`);
  }
  if (has(schema, 'properties')) {
    if (!isObject(schema.properties)) fail(`${at}.properties: Input should be a valid dictionary`);
    const required = new Set(schema.required ?? []);
    for (const [name, inner] of Object.entries(schema.properties)) {
      walk(inner, `${at}.properties.${name}`, [...pointer, 'properties', name], seen);
      if (!required.has(name)) seen.optional++;
      if (has(inner, 'anyOf') || Array.isArray(inner.type)) seen.unions++;
    }
  }
  if (has(schema, 'items')) {
    if (Array.isArray(schema.items)) fail(`${at}: For 'array' type, 'items' must be one schema (a list of item schemas is not supported)`);
    walk(schema.items, `${at}.items`, [...pointer, 'items'], seen);
  }
  if (has(schema, 'minItems') && schema.minItems !== 0 && schema.minItems !== 1) {
    fail(`${at}: For 'array' type, 'minItems' values other than 0 or 1 are not supported`);
  }
  if (has(schema, 'enum') && !(Array.isArray(schema.enum) && schema.enum.length > 0 && schema.enum.every(isPrimitive))) {
    fail(`${at}: 'enum' must be a non-empty list of strings, numbers, booleans or null`);
  }
  if (has(schema, 'const') && !isPrimitive(schema.const)) fail(`${at}: 'const' must be a string, number, boolean or null`);
  if (has(schema, 'format') && !STRING_FORMATS.includes(schema.format)) {
    fail(`${at}: For 'string' type, format '${shown(schema.format)}' is not supported (supported: ${STRING_FORMATS.join(', ')})`);
  }
  if (has(schema, 'pattern')) checkPattern(schema.pattern, at);
  for (const key of ['anyOf', 'allOf']) {
    if (!has(schema, key)) continue;
    if (!Array.isArray(schema[key]) || schema[key].length === 0) fail(`${at}: '${key}' must be a non-empty list of schemas`);
    schema[key].forEach((inner, i) => {
      if (key === 'allOf' && isObject(inner) && has(inner, '$ref')) fail(`${at}.allOf.${i}: '$ref' inside 'allOf' is not supported`);
      walk(inner, `${at}.${key}.${i}`, [...pointer, key, String(i)], seen);
    });
  }
  for (const key of ['$defs', 'definitions']) {
    if (!has(schema, key)) continue;
    if (!isObject(schema[key])) fail(`${at}.${key}: Input should be a valid dictionary`);
    for (const [name, inner] of Object.entries(schema[key])) walk(inner, `${at}.${key}.${name}`, [...pointer, key, name], seen);
  }
  if (has(schema, '$ref')) {
    if (typeof schema.$ref !== 'string') fail(`${at}.$ref: Input should be a valid string`);
    seen.refs.push({ at, pointer, ref: schema.$ref });
  }
}

function checkPattern(pattern, at) {
  if (typeof pattern !== 'string') fail(`${at}.pattern: Input should be a valid string`);
  const feature = unsupportedRegexFeature(pattern);
  if (feature !== null) fail(`${at}: For 'string' type, 'pattern' with ${feature} is not supported`);
  try {
    new RegExp(pattern, 'u');
  } catch {
    fail(`${at}: 'pattern' is not a valid regular expression`);
  }
}

const unescape = (segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~');

/** The definition a `$ref` names (`['$defs', name]`), refusing any other kind of reference. */
function definitionOf(root, { at, pointer, ref }) {
  if (!ref.startsWith('#')) fail(`${at}: external '$ref' '${ref}' is not supported; ${SUPPORTED_REFS}`);
  const target = ref === '#' ? [] : ref.startsWith('#/') ? ref.slice(2).split('/').map(unescape) : null;
  // A reference to the whole schema or to a schema holding the reference makes the schema infinite.
  if (target !== null && target.every((segment, i) => pointer[i] === segment)) {
    fail(`${at}: recursive schemas are not supported ('$ref' '${ref}' refers to a schema that holds it)`);
  }
  if (target === null || target.length !== 2 || !['$defs', 'definitions'].includes(target[0])) {
    fail(`${at}: '$ref' '${ref}' is not supported; ${SUPPORTED_REFS}`);
  }
  if (!isObject(root[target[0]]) || !has(root[target[0]], target[1])) fail(`${at}: '$ref' '${ref}' does not resolve to a definition`);
  return target.join('/');
}

/** Refuses a reference that leads back, through other definitions, to the definition holding it. */
function checkCycles(root, refs) {
  const owner = (pointer) => (pointer.length >= 2 && ['$defs', 'definitions'].includes(pointer[0]) ? pointer.slice(0, 2).join('/') : null);
  const resolved = refs.map((r) => ({ ...r, from: owner(r.pointer), to: definitionOf(root, r) }));
  const edges = new Map();
  for (const { from, to } of resolved) if (from !== null) edges.set(from, [...(edges.get(from) ?? []), to]);
  const reaches = (start, goal) => {
    const stack = [start];
    const visited = new Set();
    while (stack.length > 0) {
      const next = stack.pop();
      if (next === goal) return true;
      if (visited.has(next)) continue;
      visited.add(next);
      stack.push(...(edges.get(next) ?? []));
    }
    return false;
  };
  for (const { at, ref, from, to } of resolved) {
    if (from !== null && reaches(to, from)) {
      fail(`${at}: recursive schemas are not supported ('$ref' '${ref}' leads back to '#/${from}')`);
    }
  }
}

/** Refuses a schema outside the subset; `at` is where it sits in the request. */
export function checkSchemaSubset(schema, at) {
  const seen = { optional: 0, unions: 0, refs: [] };
  walk(schema, at, [], seen);
  checkCycles(schema, seen.refs);
  if (seen.optional > MAX_OPTIONAL_PROPERTIES) {
    fail(`${at}: the schema has ${seen.optional} optional properties; at most ${MAX_OPTIONAL_PROPERTIES} are supported`);
  }
  if (seen.unions > MAX_UNION_PROPERTIES) {
    fail(`${at}: the schema has ${seen.unions} properties using 'anyOf' or a list of types; at most ${MAX_UNION_PROPERTIES} are supported`);
  }
}
