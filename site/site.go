// Package site holds what the service serves to people and to client
// generators rather than to API clients: the OpenAPI document of the public
// API, the API reference page rendered from it and the try-it page. All of
// it is embedded in the binary; nothing is fetched at run time.
package site

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the public API, served at
// GET /v1/openapi.json. The end-to-end tests check every answer of the
// server against it, so a change to the API changes it too.
//
//go:embed openapi.json
var OpenAPI []byte

// DocsPage is the API reference page, GET /docs: Redoc rendering OpenAPI.
//
//go:embed docs.html
var DocsPage []byte

// Redoc is the Redoc viewer's standalone bundle (an ES module), vendored
// from npm (redoc/README), served at GET /docs/redoc.standalone.js.
//
//go:embed redoc/redoc.standalone.js
var Redoc []byte

// TryPage is the try-it page, GET /, and TryScript its script, GET /try.js:
// plain HTML and JavaScript calling the public API like any client.
//
//go:embed index.html
var TryPage []byte

//go:embed try.js
var TryScript []byte
