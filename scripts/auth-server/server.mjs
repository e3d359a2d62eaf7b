#!/usr/bin/env node
// The Bit Select shop's authorization server for tests and small
// deployments: panva's oidc-provider (installed by `npm ci`) with the
// settings the shop needs. It issues JWT access tokens whose audience is the
// shop's resource URL, requires PKCE, lets clients register themselves, and
// prints one line when it accepts connections:
//
//   listening on http://127.0.0.1:PORT
//
// Settings (environment):
//   AUTH_PORT              port on 127.0.0.1 (default 0: a free one)
//   AUTH_ISSUER            the issuer URL when it is not http://127.0.0.1:PORT
//                          (behind a TLS proxy; the proxy's headers are trusted)
//   AUTH_RESOURCES         resource URLs tokens may be issued for, comma-separated
//                          (default http://127.0.0.1:8848/mcp); the first is the
//                          default when a client names none
//   AUTH_ACCESS_TOKEN_TTL  access token lifetime in seconds (default 600)
//   AUTH_JWKS_FILE         a JSON Web Key Set of private keys (an EC P-256 key
//                          for access tokens and an RSA key for ID tokens) to
//                          sign with; default: new keys on every start
//   AUTH_DEV_LOGIN         "1" turns the development login form on (tests and
//                          demos); off by default, so a deployment adds its
//                          own interactions
//
// The development login form takes any login name (it becomes the token's
// `sub`) and any password: for tests and demos, never for real shoppers, so
// it is off unless asked for.

import { createServer } from 'node:http';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

let Provider;
let errors;
try {
  ({ default: Provider, errors } = await import('oidc-provider'));
} catch (error) {
  console.error(`cannot load oidc-provider (${error.message}); run \`npm ci\` in the repository root`);
  process.exit(2);
}

/// The public test client: a native app with a loopback redirect (any port).
const TEST_CLIENT = {
  client_id: 'bitselect-test',
  client_name: 'Bit Select test client',
  application_type: 'native',
  token_endpoint_auth_method: 'none',
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  redirect_uris: ['http://127.0.0.1/callback'],
};

function intFromEnv(name, fallback) {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    console.error(`${name} must be a whole number, got ${text}`);
    process.exit(2);
  }
  return value;
}

/// Signing keys: an EC P-256 key (ES256, access tokens) and an RSA key
/// (RS256, ID tokens, oidc-provider's default for clients).
function signingKeys() {
  if (process.env.AUTH_JWKS_FILE) {
    return JSON.parse(readFileSync(process.env.AUTH_JWKS_FILE, 'utf8'));
  }
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const kid = () => randomBytes(8).toString('hex');
  return {
    keys: [
      { ...ec, kid: kid(), alg: 'ES256', use: 'sig' },
      { ...rsa, kid: kid(), alg: 'RS256', use: 'sig' },
    ],
  };
}

const port = intFromEnv('AUTH_PORT', 0);
const accessTokenTTL = intFromEnv('AUTH_ACCESS_TOKEN_TTL', 600);
const resources = (process.env.AUTH_RESOURCES || 'http://127.0.0.1:8848/mcp')
  .split(',')
  .map((r) => r.trim())
  .filter(Boolean);
const devLogin = process.env.AUTH_DEV_LOGIN === '1';
if (devLogin) console.error('AUTH_DEV_LOGIN=1: any login name and password sign in; for tests and demos only');

// Listen first, so the issuer can name the port that was picked.
const server = createServer();
await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(port, '127.0.0.1', resolve);
});
const bound = server.address().port;
const issuer = process.env.AUTH_ISSUER || `http://127.0.0.1:${bound}`;

const provider = new Provider(issuer, {
  clients: [TEST_CLIENT],
  jwks: signingKeys(),
  cookies: { keys: [randomBytes(32).toString('hex')] },
  // Any account the login form names exists; its only claim is `sub`.
  async findAccount(_ctx, id) {
    return { accountId: id, async claims() { return { sub: id }; } };
  },
  features: {
    devInteractions: { enabled: devLogin },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      async defaultResource(_ctx, _client, oneOf) {
        return oneOf ?? resources[0];
      },
      // A refresh or code exchange without `resource` gets the one granted.
      async useGrantedResource() {
        return true;
      },
      async getResourceServerInfo(_ctx, resourceIndicator) {
        if (!resources.includes(resourceIndicator)) {
          throw new errors.InvalidTarget();
        }
        return {
          scope: 'shop',
          audience: resourceIndicator,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'ES256' } },
        };
      },
    },
  },
  // Every client, public or not, must use PKCE (S256 only).
  pkce: { required: () => true },
  scopes: ['openid', 'offline_access', 'shop'],
  // Rotate every refresh token on use; a reused one revokes the grant.
  rotateRefreshToken: true,
  ttl: {
    AccessToken: accessTokenTTL,
    RefreshToken: 14 * 24 * 60 * 60,
  },
});
if (process.env.AUTH_ISSUER) provider.proxy = true;

server.on('request', provider.callback());
console.log(`listening on http://127.0.0.1:${bound}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
