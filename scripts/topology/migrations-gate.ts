// The roles that serve requests first start beside the migrations: each loads its code (the
// longest part of a start), then waits until the supervisor opens the gate (a file) once the
// migrations are done, before it connects to anything.
import { existsSync, rmSync, writeFileSync } from 'node:fs'

export function closeGate(path: string): void {
  rmSync(path, { force: true })
}

export function openGate(path: string): void {
  writeFileSync(path, `${new Date().toISOString()}\n`)
}

/** Resolves at once without a gate (a role started alone); polls every 50 ms otherwise. */
export async function passGate(path: string | undefined): Promise<void> {
  if (!path) return
  while (!existsSync(path)) await new Promise((r) => setTimeout(r, 50))
}
