import { test } from 'node:test'
import assert from 'node:assert/strict'
import { csvField, csvRecord, toCsv } from './csv.js'

test('plain fields are written as they are', () => {
  assert.equal(csvField('abc'), 'abc')
  assert.equal(csvField('25.00'), '25.00')
  assert.equal(csvField(''), '')
  assert.equal(csvField(null), '')
  assert.equal(csvField(undefined), '')
  assert.equal(csvField(3), '3')
  assert.equal(csvField(true), 'true')
  assert.equal(csvField(new Date('2026-08-01T00:00:00Z')), '2026-08-01T00:00:00.000Z')
})

test('commas, quotes, CR and LF are quoted and quotes doubled', () => {
  assert.equal(csvField('Acme, Inc.'), '"Acme, Inc."')
  assert.equal(csvField('say "hi"'), '"say ""hi"""')
  assert.equal(csvField('"'), '""""')
  assert.equal(csvField('a\nb'), '"a\nb"')
  assert.equal(csvField('a\r\nb'), '"a\r\nb"')
  assert.equal(csvField('a\rb'), '"a\rb"')
})

test('formula-looking fields get a leading quote; plain numbers do not', () => {
  assert.equal(csvField('=SUM(A1:A2)'), "'=SUM(A1:A2)")
  assert.equal(csvField('+1+2'), "'+1+2")
  assert.equal(csvField('-2+3'), "'-2+3")
  assert.equal(csvField('@cmd'), "'@cmd")
  assert.equal(csvField('\tx'), "'\tx")
  // quoted after neutralising when it also has a comma or quote
  assert.equal(csvField('=HYPERLINK("http://x","y")'), `"'=HYPERLINK(""http://x"",""y"")"`)
  for (const n of ['-12.50', '+3', '-0', '-1e5', '-.5']) assert.equal(csvField(n), n)
  assert.equal(csvField('a=b'), 'a=b')
  assert.equal(csvField('-'), "'-")
})

test('records end with CRLF; a document is the header then the rows', () => {
  assert.equal(csvRecord(['a', 'b,c', null]), 'a,"b,c",\r\n')
  assert.equal(toCsv(['id', 'name'], [['1', 'x'], ['2', 'y "z"']]), 'id,name\r\n1,x\r\n2,"y ""z"""\r\n')
  assert.equal(toCsv(['id'], []), 'id\r\n')
})
