// aggregation.expression of a meter: arithmetic over event properties, e.g.
// `input_tokens + 3 * output_tokens`. A small recursive-descent parser builds an AST (no eval);
// billing-api parses at meter creation (a 400 with the position of the error) and the
// aggregator evaluates the AST per event with exact decimals when it builds bucket values.
//
// Grammar (whitespace between tokens is ignored):
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/') unary)*
//   unary   := ('+' | '-') unary | primary
//   primary := NUMBER | NAME | '(' expr ')'
//   NUMBER  := digits ['.' digits]            (no exponent)
//   NAME    := [A-Za-z_][A-Za-z0-9_]* ('.' [A-Za-z_0-9]+)*   (dots walk nested objects, as `field` does)

export type ExpressionNode =
  | { kind: 'number'; value: string }
  | { kind: 'property'; name: string }
  | { kind: 'negate'; arg: ExpressionNode }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/'; left: ExpressionNode; right: ExpressionNode }

export const EXPRESSION_MAX_LENGTH = 1000
/** Nesting bound: keeps the recursion (parse and evaluation) far from the stack limit. */
const MAX_DEPTH = 64

/** `position` is 1-based, in characters of the expression. */
export class ExpressionError extends Error {
  constructor(message: string, readonly position: number) {
    super(`${message} at position ${position}`)
  }
}

type Token = { type: 'number' | 'name' | 'op' | 'end'; text: string; pos: number }

const NAME_START = /[A-Za-z_]/
const NAME_PART = /[A-Za-z0-9_]/
const DIGIT = /[0-9]/

function tokenize(src: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < src.length) {
    const c = src[i]
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
      i++
    } else if ('+-*/()'.includes(c)) {
      tokens.push({ type: 'op', text: c, pos: i + 1 })
      i++
    } else if (DIGIT.test(c)) {
      const start = i
      while (i < src.length && DIGIT.test(src[i])) i++
      if (src[i] === '.') {
        i++
        if (!DIGIT.test(src[i] ?? '')) throw new ExpressionError('expected a digit after the decimal point', i + 1)
        while (i < src.length && DIGIT.test(src[i])) i++
      }
      if (i < src.length && (NAME_PART.test(src[i]) || src[i] === '.')) throw new ExpressionError(`unexpected '${src[i]}' in a number`, i + 1)
      tokens.push({ type: 'number', text: src.slice(start, i), pos: start + 1 })
    } else if (NAME_START.test(c)) {
      const start = i
      while (i < src.length && NAME_PART.test(src[i])) i++
      while (src[i] === '.') {
        i++
        if (!NAME_PART.test(src[i] ?? '')) throw new ExpressionError('expected a property name after \'.\'', i + 1)
        while (i < src.length && NAME_PART.test(src[i])) i++
      }
      tokens.push({ type: 'name', text: src.slice(start, i), pos: start + 1 })
    } else {
      throw new ExpressionError(`unexpected character '${c}'`, i + 1)
    }
  }
  tokens.push({ type: 'end', text: '', pos: src.length + 1 })
  return tokens
}

export function parseExpression(src: string): ExpressionNode {
  if (src.length > EXPRESSION_MAX_LENGTH) throw new ExpressionError(`expression longer than ${EXPRESSION_MAX_LENGTH} characters`, EXPRESSION_MAX_LENGTH + 1)
  const tokens = tokenize(src)
  let at = 0
  const peek = () => tokens[at]
  const describe = (t: Token) => (t.type === 'end' ? 'end of expression' : `'${t.text}'`)

  const expr = (depth: number): ExpressionNode => {
    let left = term(depth)
    while (peek().type === 'op' && (peek().text === '+' || peek().text === '-')) {
      const op = tokens[at++].text as '+' | '-'
      left = { kind: 'binary', op, left, right: term(depth) }
    }
    return left
  }
  const term = (depth: number): ExpressionNode => {
    let left = unary(depth)
    while (peek().type === 'op' && (peek().text === '*' || peek().text === '/')) {
      const op = tokens[at++].text as '*' | '/'
      left = { kind: 'binary', op, left, right: unary(depth) }
    }
    return left
  }
  const unary = (depth: number): ExpressionNode => {
    const t = peek()
    if (depth > MAX_DEPTH) throw new ExpressionError(`nested deeper than ${MAX_DEPTH} levels`, t.pos)
    if (t.type === 'op' && (t.text === '-' || t.text === '+')) {
      at++
      const arg = unary(depth + 1)
      return t.text === '-' ? { kind: 'negate', arg } : arg
    }
    return primary(depth)
  }
  const primary = (depth: number): ExpressionNode => {
    const t = tokens[at++]
    if (t.type === 'number') return { kind: 'number', value: t.text }
    if (t.type === 'name') return { kind: 'property', name: t.text }
    if (t.type === 'op' && t.text === '(') {
      const inner = expr(depth + 1)
      const close = tokens[at++]
      if (close.type !== 'op' || close.text !== ')') throw new ExpressionError(`expected ')' but found ${describe(close)}`, close.pos)
      return inner
    }
    throw new ExpressionError(`expected a number, a property name or '(' but found ${describe(t)}`, t.pos)
  }

  const ast = expr(0)
  const rest = peek()
  if (rest.type !== 'end') throw new ExpressionError(`unexpected ${describe(rest)}`, rest.pos)
  return ast
}

/** The property names an expression reads, in order of first use. */
export function expressionProperties(node: ExpressionNode, out: string[] = []): string[] {
  if (node.kind === 'property' && !out.includes(node.name)) out.push(node.name)
  else if (node.kind === 'negate') expressionProperties(node.arg, out)
  else if (node.kind === 'binary') {
    expressionProperties(node.left, out)
    expressionProperties(node.right, out)
  }
  return out
}

/** What a property read gives the evaluator: its exact value, or why there is none. */
export type OperandValue<N> = { value: N } | { skip: 'missing_field' | 'non_numeric' | 'inexact' }

/** Exact arithmetic the evaluator needs (decimal.js in the aggregator); kept abstract so this file has no dependency. */
export interface ExpressionArithmetic<N> {
  literal(text: string): N
  add(a: N, b: N): N
  sub(a: N, b: N): N
  mul(a: N, b: N): N
  div(a: N, b: N): N
  neg(a: N): N
  isZero(a: N): boolean
}

export type ExpressionResult<N> = { value: N } | { skip: 'missing_field' | 'non_numeric' | 'inexact' | 'division_by_zero' }

export function evaluateExpression<N>(
  node: ExpressionNode, read: (name: string) => OperandValue<N>, math: ExpressionArithmetic<N>,
): ExpressionResult<N> {
  switch (node.kind) {
    case 'number':
      return { value: math.literal(node.value) }
    case 'property':
      return read(node.name)
    case 'negate': {
      const r = evaluateExpression(node.arg, read, math)
      return 'skip' in r ? r : { value: math.neg(r.value) }
    }
    case 'binary': {
      const l = evaluateExpression(node.left, read, math)
      if ('skip' in l) return l
      const r = evaluateExpression(node.right, read, math)
      if ('skip' in r) return r
      if (node.op === '+') return { value: math.add(l.value, r.value) }
      if (node.op === '-') return { value: math.sub(l.value, r.value) }
      if (node.op === '*') return { value: math.mul(l.value, r.value) }
      if (math.isZero(r.value)) return { skip: 'division_by_zero' }
      return { value: math.div(l.value, r.value) }
    }
  }
}
