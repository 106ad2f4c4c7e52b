// The meter expression parser and evaluator (pure): precedence, errors with positions, and
// evaluation with an exact arithmetic (decimal.js, as the aggregator uses it).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Decimal } from 'decimal.js'
import { evaluateExpression, expressionProperties, parseExpression, type ExpressionArithmetic, type ExpressionNode } from './meter-expression.js'

const show = (n: ExpressionNode): string => {
  switch (n.kind) {
    case 'number': return n.value
    case 'property': return n.name
    case 'negate': return `(-${show(n.arg)})`
    case 'binary': return `(${show(n.left)} ${n.op} ${show(n.right)})`
  }
}
const errorOf = (src: string): string => {
  try {
    parseExpression(src)
  } catch (err) {
    return (err as Error).message
  }
  return 'parsed'
}
const D = Decimal.clone({ precision: 120 })
const exact: ExpressionArithmetic<Decimal> = {
  literal: (t) => new D(t), add: (a, b) => a.plus(b), sub: (a, b) => a.minus(b), mul: (a, b) => a.times(b),
  div: (a, b) => a.div(b), neg: (a) => a.negated(), isZero: (a) => a.isZero(),
}
const evaluate = (src: string, props: Record<string, string | undefined>) => {
  const r = evaluateExpression<Decimal>(parseExpression(src), (name) => {
    const v = props[name]
    if (v === undefined) return { skip: 'missing_field' }
    return /^-?\d+(\.\d+)?$/.test(v) ? { value: new D(v) } : { skip: 'non_numeric' }
  }, exact)
  return 'skip' in r ? r.skip : r.value.toFixed()
}

test('precedence and associativity: * and / bind tighter, both left to right, unary minus', () => {
  assert.equal(show(parseExpression('input_tokens + 3 * output_tokens')), '(input_tokens + (3 * output_tokens))')
  assert.equal(show(parseExpression('a - b - c')), '((a - b) - c)')
  assert.equal(show(parseExpression('a / b * c')), '((a / b) * c)')
  assert.equal(show(parseExpression('(a + b) * 2.5')), '((a + b) * 2.5)')
  assert.equal(show(parseExpression('-a * -(b + 1)')), '((-a) * (-(b + 1)))')
  assert.equal(show(parseExpression('+a')), 'a')
  assert.equal(show(parseExpression('usage.input.tokens*2')), '(usage.input.tokens * 2)')
  assert.deepEqual(expressionProperties(parseExpression('a + b * a - c.d')), ['a', 'b', 'c.d'])
})

test('syntax errors name the 1-based position of the offending token', () => {
  assert.equal(errorOf('a +'), "expected a number, a property name or '(' but found end of expression at position 4")
  assert.equal(errorOf('a + * b'), "expected a number, a property name or '(' but found '*' at position 5")
  assert.equal(errorOf('(a + b'), "expected ')' but found end of expression at position 7")
  assert.equal(errorOf('a + b)'), "unexpected ')' at position 6")
  assert.equal(errorOf('a b'), "unexpected 'b' at position 3")
  assert.equal(errorOf('a % b'), "unexpected character '%' at position 3")
  assert.equal(errorOf('1.'), 'expected a digit after the decimal point at position 3')
  assert.equal(errorOf('2x'), "unexpected 'x' in a number at position 2")
  assert.equal(errorOf('1e5'), "unexpected 'e' in a number at position 2")
  assert.equal(errorOf('a.'), "expected a property name after '.' at position 3")
  assert.equal(errorOf(''), "expected a number, a property name or '(' but found end of expression at position 1")
  assert.equal(errorOf('eval(x)'), "unexpected '(' at position 5")
  assert.equal(errorOf('a["x"]'), "unexpected character '[' at position 2")
  assert.match(errorOf('('.repeat(100) + 'a' + ')'.repeat(100)), /^nested deeper than 64 levels at position 6[0-9]$/)
  assert.match(errorOf('a+'.repeat(600) + 'a'), /longer than 1000 characters/)
})

test('evaluation is exact; missing, non-numeric and division by zero skip', () => {
  // 1200 + 3 x 450 = 2550
  assert.equal(evaluate('input_tokens + 3 * output_tokens', { input_tokens: '1200', output_tokens: '450' }), '2550')
  // 0.1 + 0.2 = 0.3 exactly (a float would give 0.30000000000000004)
  assert.equal(evaluate('a + b', { a: '0.1', b: '0.2' }), '0.3')
  // (10 - 4) / 8 = 0.75; -(2.5) * 4 = -10
  assert.equal(evaluate('(a - b) / 8', { a: '10', b: '4' }), '0.75')
  assert.equal(evaluate('-a * 4', { a: '2.5' }), '-10')
  // 123456789012345.123456789012 x 1000000 keeps every digit
  assert.equal(evaluate('a * 1000000', { a: '123456789012345.123456789012' }), '123456789012345123456.789012')
  assert.equal(evaluate('a + b', { a: '1' }), 'missing_field')
  assert.equal(evaluate('a + b', { a: '1', b: 'ten' }), 'non_numeric')
  assert.equal(evaluate('a / (b - 2)', { a: '1', b: '2' }), 'division_by_zero')
})
