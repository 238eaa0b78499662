'use client'
import { useActionState } from 'react'
import { ask } from '@/lib/ai/anthropic/tool-calling/actions'
import type { AskState, JsonValue, ToolCallView } from '@/lib/ai/anthropic/tool-calling/types'

const EXAMPLES = ["What's the status of order #4821?", 'I want to return order #7777', 'Quiero devolver el pedido #9999 o #1234']

export function AskForm() {
  const [state, formAction, pending] = useActionState(ask, null)
  return (
    <>
      <form action={formAction} className="ask">
        <label htmlFor="question">Your question</label>
        <div className="row">
          <input id="question" name="question" defaultValue={state?.question ?? ''} placeholder={EXAMPLES[0]} autoComplete="off" required />
          <button type="submit" disabled={pending}>
            {pending ? 'Asking…' : 'Ask'}
          </button>
        </div>
        <label className="check">
          <input type="checkbox" name="onToolError" value="continue" defaultChecked={state?.onToolError === 'continue'} />
          <span>
            Let the model handle tool errors (<code>onToolError: &quot;continue&quot;</code>); otherwise the run stops at the first failing tool
          </span>
        </label>
        <p className="examples">Try: {EXAMPLES.map((q) => <q key={q}>{q}</q>)}</p>
      </form>
      <div aria-live="polite">{state && !pending && <Result state={state} />}</div>
    </>
  )
}

function Result({ state }: { state: AskState }) {
  const { result } = state
  return (
    <section className="result" data-testid="result">
      <p className="asked">
        <span>You asked</span> {state.question} <span className="mode">onToolError: &quot;{state.onToolError}&quot;</span>
      </p>
      {result.ok ? (
        <div className="answer" data-testid="answer">
          <h2>Answer</h2>
          <p>{result.answer}</p>
        </div>
      ) : (
        <div className="error" role="alert" data-testid="error" data-code={result.error.code}>
          <h2>
            Error <code data-testid="error-code">{result.error.code}</code>
          </h2>
          <p data-testid="error-message">{result.error.message}</p>
        </div>
      )}
      <ToolCalls calls={result.toolCalls} />
    </section>
  )
}

function ToolCalls({ calls }: { calls: ToolCallView[] }) {
  return (
    <div className="calls">
      <h2>Tool calls ({calls.length})</h2>
      {calls.length === 0 ? (
        <p className="none">No tool was called.</p>
      ) : (
        <ol data-testid="tool-calls">
          {calls.map((call, i) => (
            <li key={i} data-testid="tool-call" data-tool={call.toolName} className={call.isError ? 'failed' : 'ok'}>
              <div className="name">
                <code data-testid="tool-name">{call.toolName}</code>
                <span className="badge">{call.isError ? 'failed' : 'ok'}</span>
              </div>
              <dl>
                <dt>input</dt>
                <dd>
                  <Json value={call.input} testId="tool-input" />
                </dd>
                <dt>{call.isError ? 'error' : 'output'}</dt>
                <dd>{call.isError ? <pre data-testid="tool-error">{call.failure}</pre> : <Json value={call.output} testId="tool-output" />}</dd>
              </dl>
            </li>
          ))}
        </ol>
      )}
    </div>
  )
}

function Json({ value, testId }: { value: JsonValue; testId: string }) {
  return <pre data-testid={testId}>{JSON.stringify(value, null, 2)}</pre>
}
