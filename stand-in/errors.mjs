// The API's error answers: the `error.type` and the default message for each status, and the
// Refusal a rule throws so the server answers the way the real API would.

export const ERROR_TYPES = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  405: 'invalid_request_error',
  408: 'timeout_error',
  409: 'conflict_error',
  413: 'request_too_large',
  422: 'invalid_request_error',
  429: 'rate_limit_error',
  500: 'api_error',
  503: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

export const ERROR_MESSAGES = {
  400: 'Invalid request',
  401: 'invalid x-api-key',
  402: 'Your credit balance is too low to access the Anthropic API.',
  403: 'Your API key does not have permission to use the specified resource.',
  404: 'The requested resource could not be found.',
  408: 'Request timed out',
  409: 'Conflict',
  413: 'Request exceeds the maximum allowed number of bytes.',
  422: 'Unprocessable entity',
  429: 'Number of request tokens has exceeded your per-minute rate limit',
  500: 'Internal server error',
  503: 'Service unavailable',
  504: 'Request timed out',
  529: 'Overloaded',
};

/**
 * A request the API refuses: status, error type and message as the real API sends them, and the
 * `error.details` it adds to some (`{ error_code, … }`, which the SDKs read to tell refusals apart).
 */
export class Refusal extends Error {
  constructor(status, message, type = ERROR_TYPES[status], details = undefined) {
    super(message);
    this.status = status;
    this.type = type;
    this.details = details;
  }
}

export function fail(message) {
  throw new Refusal(400, message);
}
