'use client'
import { useActionState } from 'react'
import { answerApproval, ask } from '@/lib/ai/anthropic/tool-calling/actions'
import type { AskResult, AskState, JsonValue, ToolCallView } from '@/lib/ai/anthropic/tool-calling/types'

const EXAMPLES = ["What's the status of order #4821?", 'When will order 4821 arrive?', 'I want to return order #2468', 'I want to return order #7777', 'Quiero devolver el pedido #9999 o #1234']

/**
 * Both forms (the question, and the answer to a pending approval) post through this one state: a
 * question goes to `ask`, an answer to `answerApproval`. The page shows the calls of every round
 * of the same question, so the calls of a resumed run are added to the ones shown before.
 */
async function submit(previous: AskState | null, form: FormData): Promise<AskState> {
  if (form.get('intent') !== 'answer') return ask(null, form)
  const next = await answerApproval(null, form)
  const before = previous?.result.ok === 'approval_required' ? previous.result.toolCalls : []
  // A refused answer for a conversation the server does not have comes back without its
  // question: keep showing the one this page asked.
  const asked = next.question === '' && previous ? { question: previous.question, onToolError: previous.onToolError } : {}
  return { ...next, ...asked, result: { ...next.result, toolCalls: [...before, ...next.result.toolCalls] } as AskResult }
}

export function AskForm() {
  const [state, formAction, pending] = useActionState(submit, null)
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
      <div aria-live="polite">{state && !pending && <Result state={state} formAction={formAction} />}</div>
    </>
  )
}

function Result({ state, formAction }: { state: AskState; formAction: (form: FormData) => void }) {
  const { result } = state
  return (
    <section className="result" data-testid="result" data-state={result.ok === 'approval_required' ? 'approval' : 'done'}>
      <p className="asked">
        <span>You asked</span> {state.question} <span className="mode">onToolError: &quot;{state.onToolError}&quot;</span>
      </p>
      {result.ok === 'approval_required' ? (
        <Approval result={result} formAction={formAction} />
      ) : result.ok ? (
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
      {(result.ok !== 'approval_required' || result.toolCalls.length > 0) && <ToolCalls calls={result.toolCalls} />}
    </section>
  )
}

/**
 * A call waiting for the user's yes: what it would do, Approve / Decline and an optional reason.
 * The paused conversation stays on the server: the form carries only its id and the approvalIds
 * the server issued, which the package checks on the way back (a made-up id, or one from another
 * conversation, is refused and nothing runs).
 */
function Approval({ result, formAction }: { result: Extract<AskResult, { ok: 'approval_required' }>; formAction: (form: FormData) => void }) {
  return (
    <form action={formAction} className="approval" data-testid="approval">
      <h2>Your approval is needed</h2>
      <input type="hidden" name="intent" value="answer" />
      <input type="hidden" name="conversationId" value={result.conversationId} />
      <ul>
        {result.pendingApprovals.map((p) => (
          <li key={p.approvalId} data-testid="pending-call" data-tool={p.toolName}>
            <input type="hidden" name="approvalId" value={p.approvalId} />
            <p className="question" data-testid="approval-question">
              {p.question}
            </p>
            <code data-testid="pending-tool">{p.toolName}</code>
            <pre data-testid="pending-input">{JSON.stringify(p.input, null, 2)}</pre>
          </li>
        ))}
      </ul>
      <label htmlFor="reason">Reason, if you decline (optional; the assistant is told)</label>
      <input id="reason" name="reason" autoComplete="off" placeholder="e.g. Not this order" />
      <div className="row">
        <button type="submit" name="decision" value="approve">
          Approve
        </button>
        <button type="submit" name="decision" value="decline" className="secondary">
          Decline
        </button>
      </div>
    </form>
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
            <li key={i} data-testid="tool-call" data-tool={call.toolName} className={call.declined ? 'declined' : call.isError ? 'failed' : 'ok'}>
              <div className="name">
                <code data-testid="tool-name">{call.toolName}</code>
                <span className="badge">{call.declined ? 'declined' : call.isError ? 'failed' : 'ok'}</span>
              </div>
              <dl>
                <dt>input</dt>
                <dd>
                  <Json value={call.input} testId="tool-input" />
                </dd>
                <dt>{call.declined ? 'not run' : call.isError ? 'error' : 'output'}</dt>
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
