// Whether a scripted final answer honours the request's structured-output format. The real API
// constrains the model's text to the schema, so a reply that does not match it is never something
// the API sends: a test that scripts one by mistake gets a 500 naming why, not a quiet pass. A step
// with `ignoresFormat: true` sends its text anyway (for tests of a client reading a broken answer).
//
// schemaMismatch checks a value against the supported subset of JSON Schema (rules/schema-subset.mjs)
// and words its reasons as the jsonschema checkers do (`at /orderId: 1 is not of type "string"`).

import { isIPv4, isIPv6 } from 'node:net';
import { formatSchemaOf } from './rules/output-format.mjs';
import { has, isObject } from './values.mjs';

export const FORMAT_MISMATCH = 'mock-api: the scripted answer does not match output_config.format: ';

/** A calendar date that exists (`2025-02-30` does not). */
function realDate(y, m, d) {
  const date = new Date(Date.UTC(Number(y), Number(m) - 1, Number(d)));
  return date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(m) - 1 && date.getUTCDate() === Number(d);
}
const TIME = /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/i;
const DATE = /^(\d{4})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;

/**
 * The supported string formats, as strictly as the engine checks them (RFC 3339 dates and times
 * that exist, real IP addresses), so that no scripted answer passes here and fails there.
 */
const FORMATS = {
  'date-time': { test: (s) => { const [date, time] = s.split(/[Tt]/); return s.split(/[Tt]/).length === 2 && FORMATS.date.test(date) && TIME.test(time); } },
  date: { test: (s) => { const m = DATE.exec(s); return m !== null && realDate(m[1], m[2], m[3]); } },
  time: TIME,
  duration: /^P(?!$)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?$/,
  email: /^[^@\s]+@[^@\s]+$/,
  hostname: /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
  uri: /^[A-Za-z][A-Za-z0-9+.-]*:\S*$/,
  ipv4: { test: (s) => isIPv4(s) },
  ipv6: { test: (s) => isIPv6(s) },
  uuid: /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/,
};

const json = (v) => JSON.stringify(v);
const escapeSegment = (s) => String(s).replace(/~/g, '~0').replace(/\//g, '~1');

function typeFits(type, value) {
  switch (type) {
    case 'object': return isObject(value);
    case 'array': return Array.isArray(value);
    case 'string': return typeof value === 'string';
    case 'integer': return Number.isInteger(value);
    case 'number': return typeof value === 'number' && Number.isFinite(value);
    case 'boolean': return typeof value === 'boolean';
    case 'null': return value === null;
    default: return false;
  }
}

/** Deep equality of JSON values, for enum and const. */
function same(a, b) {
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => same(x, b[i]));
  if (isObject(a) || isObject(b)) {
    if (!isObject(a) || !isObject(b) || Object.keys(a).length !== Object.keys(b).length) return false;
    return Object.keys(a).every((k) => has(b, k) && same(a[k], b[k]));
  }
  return a === b;
}

function enumWords(value, options) {
  const shown = options.length <= 3
    ? options.map(json).map((o, i) => (i === 0 ? o : i === options.length - 1 ? ` or ${o}` : `, ${o}`)).join('')
    : `${options.slice(0, 2).map(json).join(', ')} or ${options.length - 2} other candidates`;
  return `${json(value)} is not one of ${shown}`;
}

function resolve(root, ref) {
  const [kind, name] = ref.slice(2).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  return root?.[kind]?.[name];
}

/**
 * Why `value` does not match `schema` (`at /path: reason`), or null when it does. `root` holds the
 * `$defs` / `definitions` a `$ref` names.
 */
export function schemaMismatch(schema, value, root = schema, path = '') {
  const at = (reason) => `at ${path || '/'}: ${reason}`;
  if (!isObject(schema)) return null;
  if (typeof schema.$ref === 'string') {
    const why = schemaMismatch(resolve(root, schema.$ref), value, root, path);
    if (why !== null) return why;
  }
  if (has(schema, 'type')) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeFits(t, value))) {
      return at(types.length === 1 ? `${json(value)} is not of type "${types[0]}"` : `${json(value)} is not of types ${types.map((t) => `"${t}"`).join(', ')}`);
    }
  }
  if (has(schema, 'const') && !same(schema.const, value)) return at(`${json(schema.const)} was expected`);
  if (Array.isArray(schema.enum) && !schema.enum.some((o) => same(o, value))) return at(enumWords(value, schema.enum));
  if (isObject(value)) {
    for (const name of Array.isArray(schema.required) ? schema.required : []) {
      if (!has(value, name)) return at(`${json(name)} is a required property`);
    }
    const properties = isObject(schema.properties) ? schema.properties : {};
    if (schema.additionalProperties === false) {
      const extra = Object.keys(value).filter((k) => !has(properties, k));
      if (extra.length > 0) {
        return at(`Additional properties are not allowed (${extra.map((k) => `'${k}'`).join(', ')} ${extra.length === 1 ? 'was' : 'were'} unexpected)`);
      }
    }
    for (const [name, inner] of Object.entries(properties)) {
      if (!has(value, name)) continue;
      const why = schemaMismatch(inner, value[name], root, `${path}/${escapeSegment(name)}`);
      if (why !== null) return why;
    }
  }
  if (Array.isArray(value)) {
    if (schema.minItems === 1 && value.length < 1) return at(`${json(value)} has less than 1 item`);
    if (isObject(schema.items)) {
      for (const [i, item] of value.entries()) {
        const why = schemaMismatch(schema.items, item, root, `${path}/${i}`);
        if (why !== null) return why;
      }
    }
  }
  if (typeof value === 'string') {
    if (has(FORMATS, schema.format) && !FORMATS[schema.format].test(value)) return at(`${json(value)} is not a "${schema.format}"`);
    if (typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) return at(`${json(value)} does not match "${schema.pattern}"`);
  }
  if (Array.isArray(schema.anyOf) && !schema.anyOf.some((branch) => schemaMismatch(branch, value, root, path) === null)) {
    return at(`${json(value)} is not valid under any of the schemas listed in the 'anyOf' keyword`);
  }
  for (const branch of Array.isArray(schema.allOf) ? schema.allOf : []) {
    const why = schemaMismatch(branch, value, root, path);
    if (why !== null) return why;
  }
  return null;
}

/** Whether a message is a final answer: it ends the turn (or hit a stop sequence) and calls no tool. */
export function isFinalAnswer(message) {
  const blocks = Array.isArray(message.content) ? message.content : [];
  return (message.stop_reason === 'end_turn' || message.stop_reason === 'stop_sequence') && !blocks.some((b) => isObject(b) && b.type === 'tool_use');
}

/** The text of a message's text blocks, joined as a client reads the answer. */
export function answerText(message) {
  if (typeof message.content === 'string') return message.content;
  const blocks = Array.isArray(message.content) ? message.content : [];
  return blocks.filter((b) => isObject(b) && b.type === 'text' && typeof b.text === 'string').map((b) => b.text).join('');
}

/**
 * Why the reply `message` to `body` breaks the request's format (the reason after FORMAT_MISMATCH),
 * or null: no format, not a final answer (tool calls, a refusal, a cut answer), or a match.
 */
export function answerMismatch(body, message) {
  const schema = formatSchemaOf(body);
  if (schema === null || !isFinalAnswer(message)) return null;
  let value;
  try {
    value = JSON.parse(answerText(message));
  } catch (err) {
    return `the text is not JSON (${err.message}); script it with JSON.stringify(…), or mark the step ignoresFormat: true`;
  }
  return schemaMismatch(schema, value);
}
