// AWS's error answers as Bedrock sends them: the type in the `x-amzn-errortype` header (type, a
// colon and the service's namespace), a JSON body with the message (`message` from the service,
// `Message` from the front end that checks signatures), and `x-amzn-requestid` on every answer.

import { Answer } from './common.mjs';

const SERVICE_NAMESPACE = 'http://internal.amazon.com/coral/com.amazon.bedrock/';
const FRONT_NAMESPACE = 'http://internal.amazon.com/coral/com.amazon.coral.service/';

/** The front end's types: they carry `Message` and the coral namespace. */
const FRONT_TYPES = new Set([
  'InvalidSignatureException', 'IncompleteSignatureException', 'MissingAuthenticationTokenException', 'UnrecognizedClientException',
  'ExpiredTokenException', 'UnknownOperationException', 'SerializationException',
]);

/** An AWS error answer of `type` with HTTP `status` and `message`, for the request `record`. */
export function awsError(record, status, type, message) {
  const front = FRONT_TYPES.has(type);
  const headers = { 'x-amzn-requestid': record.requestId, 'x-amzn-errortype': `${type}:${front ? FRONT_NAMESPACE : SERVICE_NAMESPACE}` };
  return new Answer(status, front ? { Message: message } : { message }, headers);
}

/** The AWS type a status of the API's maps to, when a test scripts an API error on Bedrock. */
const TYPE_FOR_STATUS = {
  400: 'ValidationException',
  401: 'AccessDeniedException',
  403: 'AccessDeniedException',
  404: 'ResourceNotFoundException',
  408: 'ModelTimeoutException',
  413: 'ValidationException',
  424: 'ModelErrorException',
  429: 'ThrottlingException',
  500: 'InternalServerException',
  503: 'ServiceUnavailableException',
  529: 'ServiceUnavailableException',
};

/** The status AWS gives each type (ServiceQuotaExceeded is a 400, ModelNotReady a 429). */
export const STATUS_FOR_TYPE = {
  ValidationException: 400,
  ResourceNotFoundException: 404,
  AccessDeniedException: 403,
  ThrottlingException: 429,
  ServiceQuotaExceededException: 400,
  ServiceUnavailableException: 503,
  ModelNotReadyException: 429,
  ModelTimeoutException: 408,
  ModelErrorException: 424,
  InternalServerException: 500,
  ExpiredTokenException: 403,
};

/** An API error (status, { message }) in Bedrock's shape. */
export function awsErrorForStatus(record, status, error) {
  const type = TYPE_FOR_STATUS[status] ?? (status >= 500 ? 'InternalServerException' : 'ValidationException');
  const shown = status === 529 ? 503 : status === 401 ? 403 : status;
  return awsError(record, shown, type, error?.message ?? type);
}

/** What a test can make Bedrock answer on purpose (a step `{ platformError: name }`). */
export const BEDROCK_FAULTS = {
  throttle: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  quota: ['ServiceQuotaExceededException', 'Too many tokens, please wait before trying again.'],
  unavailable: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
  'not-ready': ['ModelNotReadyException', 'Model is not ready to serve inference requests. The AWS SDK will automatically retry the operation.'],
  timeout: ['ModelTimeoutException', 'Model has timed out in processing the request. Try your request again.'],
  server: ['InternalServerException', 'The system encountered an unexpected error during processing. Try your request again.'],
  'model-error': ['ModelErrorException', 'The model returned an error while processing the request.'],
  denied: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  expired: ['ExpiredTokenException', 'The security token included in the request is expired'],
};
