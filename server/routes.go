package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/imageops"
	"carphoto/site"
)

// routes lists every route of the API.
func (s *Server) routes() {
	e := s.e
	e.Use(s.requestID, s.recoverPanics, s.observe, s.accessLog)
	e.Use(s.cors()...)

	get(e, "/healthz", s.healthz)
	get(e, "/readyz", s.readyz)
	// The API's description is public: registered outside the /v1 group,
	// it needs no key and counts against no rate.
	get(e, "/v1/openapi.json", s.openapi)
	get(e, "/docs", page(site.DocsPage))
	get(e, "/docs/redoc.standalone.js", script(site.Redoc))
	get(e, "/", s.tryPage())
	get(e, "/try.js", script(site.TryScript))
	if s.cfg.Metrics != nil {
		get(e, "/metrics", s.serveMetrics())
	}

	// The public API: every call authenticated, then rate-limited.
	v1 := e.Group("/v1", s.authenticate, s.rateLimit)
	for _, op := range imageops.Ops {
		v1.POST("/"+string(op), s.photoHandler(op))
	}
	v1.POST("/"+OpVideoBlur, s.videoBlur)
	get(v1, "/jobs/:id", s.videoJob)
	get(v1, "/jobs/:id/result", s.videoResult)
	get(v1, "/account", s.getAccount)
	v1.POST("/assets", s.createAsset)
	get(v1, "/assets", s.listAssets)
	get(v1, "/assets/:id", s.getAsset)
	v1.DELETE("/assets/:id", s.deleteAsset)

	// The admin API and the queue dashboard, only when ADMIN_TOKEN is set.
	if s.cfg.AdminToken != "" {
		admin := e.Group("/admin/v1", s.adminAuth)
		admin.POST("/accounts", s.adminCreateAccount)
		get(admin, "/accounts/:id", s.adminShowAccount)
		admin.POST("/accounts/:id/keys/rotate", s.adminRotateKey)
		admin.POST("/accounts/:id/keys/revoke", s.adminRevokeKey)
		admin.POST("/accounts/:id/credits", s.adminAddCredits)
		get(admin, "/accounts/:id/ledger", s.adminLedger)

		queues, dashboard := e.Group(queuesPath, s.dashboardAuth), s.queueDashboard()
		get(queues, "", dashboard)
		get(queues, "/*", dashboard)

		// A group with its own middleware answers what it does not route
		// with a 404 behind that middleware (Echo's Group.Use); here a
		// method an admin path does not take is 405 first, as under /v1.
		for _, p := range []string{"", "/*"} {
			e.RouteNotFound("/admin/v1"+p, s.methodsOr(s.adminAuth(echo.NotFoundHandler)))
			e.RouteNotFound(queuesPath+p, s.methodsOr(s.dashboardAuth(echo.NotFoundHandler)))
		}
	}
	// A path served with other methods is 405 whoever asks (the public
	// document's included). Anything else under /v1 is an unknown tool once
	// the caller is known and within its rate: the spec's precedence is
	// 401, 429, then 400.
	e.Any("/v1/*", s.methodsOr(s.authenticate(s.rateLimit(s.unknownTool))))
}

func (s *Server) unknownTool(c echo.Context) error {
	r := c.Request()
	if r.Method != http.MethodPost {
		c.Response().Header().Set(echo.HeaderAllow, http.MethodPost)
		return carphoto.Errorf(carphoto.EMethodNotAllowed, "method %s is not allowed on %s; operations are POST", r.Method, r.URL.Path)
	}
	return carphoto.Errorf(carphoto.EUnknownTool, "unknown tool %s; available: %s", echoed(c.Param("*")), strings.Join(s.ops(), ", "))
}

// ops are the operations this server offers: the photo operations, and
// video-blur when it is enabled.
func (s *Server) ops() []string {
	var ops []string
	for _, op := range imageops.Ops {
		ops = append(ops, string(op))
	}
	if s.cfg.Video.Store != nil {
		ops = append(ops, string(imageops.VideoBlur))
	}
	return ops
}

func (s *Server) healthz(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(c echo.Context) error {
	ok, why := s.ready(c.Request().Context())
	if !ok {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "reason": why})
	}
	body := map[string]any{"status": "ok"}
	if w := s.persistenceWarning(c.Request().Context()); w != "" {
		body["warnings"] = []string{w}
	}
	return c.JSON(http.StatusOK, body)
}

// persistenceWarning says when the Redis this process talks to does not
// keep an append-only file: accounts, keys and credits live there, and a
// restart of such a Redis loses them all. It is a warning, not a failure:
// a test or development setup may not care. A Redis that does not say
// (INFO refused) gets no warning.
func (s *Server) persistenceWarning(ctx context.Context) string {
	info, err := s.rdb.Info(ctx, "persistence").Result()
	if err != nil || !strings.Contains(info, "aof_enabled:0") {
		return ""
	}
	return "Redis persistence is off (appendonly no): a restart of Redis loses every account, key and credit; run production Redis with appendonly yes and appendfsync everysec or always"
}
