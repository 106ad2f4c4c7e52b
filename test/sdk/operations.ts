// The operations of @flexprice/sdk, read from the package itself: every function in its funcs/
// folder is one operation (its operationID, HTTP method and path), and the class in sdk/ that
// calls it gives the name a user writes (`sdk.customers.createCustomer`).
import { readdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

export interface SdkOperation {
  /** `<sdk property>.<method>`, as called: `customers.createCustomer` */
  name: string
  method: string
  /** relative to serverURL, as the SDK writes it */
  path: string
}

const root = join(dirname(createRequire(import.meta.url).resolve('@flexprice/sdk/package.json')), 'src')

const one = (text: string, re: RegExp, what: string, file: string): string => {
  const m = re.exec(text)
  if (!m?.[1]) throw new Error(`${file}: no ${what}`)
  return m[1]
}

/** sdk/<file>.ts `export class Customers` is reached as `sdk.customers`, its methods call funcs by name. */
function methodsByFunction(): Map<string, string> {
  const byFunc = new Map<string, string>()
  const dir = join(root, 'sdk')
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const text = readFileSync(join(dir, file), 'utf8')
    const cls = /export class (\w+) extends ClientSDK/.exec(text)?.[1]
    if (!cls || cls === 'Flexprice') continue
    const property = cls[0]!.toLowerCase() + cls.slice(1)
    for (const m of text.matchAll(/async (\w+)\([^]*?unwrapAsync\((\w+)\(/g)) byFunc.set(m[2]!, `${property}.${m[1]!}`)
  }
  return byFunc
}

export function sdkOperations(): SdkOperation[] {
  const byFunc = methodsByFunction()
  const dir = join(root, 'funcs')
  return readdirSync(dir).filter((f) => f.endsWith('.ts')).map((file) => {
    const text = readFileSync(join(dir, file), 'utf8')
    const func = one(text, /export function (\w+)\(/, 'function', file)
    const name = byFunc.get(func)
    if (!name) throw new Error(`${file}: no SDK method calls ${func}`)
    return {
      name,
      method: one(text, /method: "([A-Z]+)"/, 'method', file),
      path: one(text, /pathToFunc\("([^"]+)"/, 'path', file),
    }
  }).sort((a, b) => a.name.localeCompare(b.name))
}
