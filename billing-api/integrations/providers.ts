// The providers this build knows, by connection `provider` value.
import type { Config } from '../../platform/config.js'
import { ValidationError } from '../../platform/errors.js'
import { genericHttpProvider } from './generic-http/adapter.js'
import type { IntegrationProvider } from './provider.js'
import { stripeProvider } from './stripe/adapter.js'

export const PROVIDER_TYPES = ['stripe', 'generic_http'] as const

export function providerFor(config: Config, type: string): IntegrationProvider {
  switch (type) {
    case 'stripe':
      return stripeProvider(config.integrations.stripeApiBase)
    case 'generic_http':
      return genericHttpProvider(config.outbound)
    default:
      throw new ValidationError(`provider must be one of ${PROVIDER_TYPES.join(', ')}, got ${type}`, 'provider')
  }
}
