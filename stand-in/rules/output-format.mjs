// `output_config` (effort, the structured-output format, the task budget) and the deprecated
// top-level `output_format`, the older spelling of `output_config.format`.

import { fail } from '../errors.mjs';
import { has, isObject } from '../values.mjs';
import { needBeta } from './context-management.mjs';
import { badTag, checkDict, checkInteger, onlyKeys } from './fields.mjs';
import { checkSchemaSubset } from './schema-subset.mjs';

export const TASK_BUDGETS_BETA = 'task-budgets-2026-03-13';
export const EFFORTS = ['low', 'medium', 'high', 'xhigh', 'max'];

const present = (obj, key) => has(obj, key) && obj[key] !== null;
const efforts = `${EFFORTS.slice(0, -1).map((e) => `'${e}'`).join(', ')} or '${EFFORTS.at(-1)}'`;

/** `{ type: 'json_schema', schema }`, its schema inside the subset; `where` names the field. */
function checkFormat(format, where) {
  checkDict(format, where);
  if (format.type !== 'json_schema') badTag(where, format.type, ['json_schema']);
  onlyKeys(format, new Set(['type', 'schema']), `${where}.`);
  if (!has(format, 'schema')) fail(`${where}.schema: Field required`);
  checkDict(format.schema, `${where}.schema`);
  checkSchemaSubset(format.schema, `${where}.schema`);
}

function checkTaskBudget(budget, betas) {
  const where = 'output_config.task_budget';
  checkDict(budget, where);
  needBeta(betas, TASK_BUDGETS_BETA, where, 'a task budget');
  onlyKeys(budget, new Set(['type', 'total', 'remaining']), `${where}.`);
  if (budget.type !== 'tokens') fail(`${where}.type: Input should be 'tokens'`);
  if (!has(budget, 'total')) fail(`${where}.total: Field required`);
  checkInteger(budget.total, `${where}.total`, 1);
  if (present(budget, 'remaining')) checkInteger(budget.remaining, `${where}.remaining`, 0);
}

/** `output_config` and `output_format`; `betas`: the request's `anthropic-beta` names. */
export function checkOutputFields(body, betas) {
  if (has(body, 'output_config')) {
    const oc = body.output_config;
    checkDict(oc, 'output_config');
    onlyKeys(oc, new Set(['effort', 'format', 'task_budget']), 'output_config.');
    if (present(oc, 'effort') && !EFFORTS.includes(oc.effort)) fail(`output_config.effort: Input should be ${efforts}`);
    if (present(oc, 'format')) checkFormat(oc.format, 'output_config.format');
    if (present(oc, 'task_budget')) checkTaskBudget(oc.task_budget, betas);
  }
  if (present(body, 'output_format')) {
    if (isObject(body.output_config) && present(body.output_config, 'format')) {
      fail('output_format: cannot be used together with `output_config.format`; `output_format` is deprecated, send only `output_config.format`');
    }
    checkFormat(body.output_format, 'output_format');
  }
}

/** The schema the request's answer must match (`output_config.format`, else `output_format`), or null. */
export function formatSchemaOf(body) {
  const format = isObject(body?.output_config) && isObject(body.output_config.format) ? body.output_config.format : body?.output_format;
  return isObject(format) && format.type === 'json_schema' && isObject(format.schema) ? format.schema : null;
}
