// A certified OpenID provider (panva's oidc-provider) for the identity tests: client-credentials
// grants that answer JWT access tokens for one resource, each client signing with its own
// algorithm. Started by tests/oidc/conftest.py:
//   node provider.mjs <private JWKS file> <port, 0 for any>
// and prints one line, {"issuer": "http://127.0.0.1:<port>"}, once it listens.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const [keysFile, portArg] = process.argv.slice(2);
const jwks = JSON.parse(readFileSync(keysFile, 'utf8'));
const RESOURCE = 'urn:tollgate:api';
const SECRET = 'only-for-the-identity-tests';

// client id -> [signing algorithm, audience]
const CLIENTS = {
  'tollgate-rs256': ['RS256', 'tollgate-api'],
  'tollgate-es256': ['ES256', 'tollgate-api'],
  'tollgate-ps384': ['PS384', 'tollgate-api'],
  'another-api': ['RS256', 'another-api'],
};

const server = createServer();
server.listen(Number(portArg || 0), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    jwks,
    clients: Object.keys(CLIENTS).map((id) => ({
      client_id: id, client_secret: SECRET, grant_types: ['client_credentials'],
      redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_post',
    })),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, resource, client) => {
          const [alg, audience] = CLIENTS[client.clientId];
          return { scope: 'review', audience, accessTokenFormat: 'jwt', accessTokenTTL: 300,
                   jwt: { sign: { alg } } };
        },
      },
    },
    extraTokenClaims: () => ({ roles: ['automation'], tenant: 'acme' }),
  });
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
