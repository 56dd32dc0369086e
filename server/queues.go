package server

import (
	"crypto/sha256"
	"crypto/subtle"

	"github.com/hibiken/asynqmon"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"

	"carphoto"
)

// queuesPath is where the queue dashboard lives.
const queuesPath = "/admin/queues"

// sharedRedis hands asynqmon the server's own Redis client, so the
// dashboard opens no connections of its own. Its Close is never called.
type sharedRedis struct{ c redis.UniversalClient }

func (o sharedRedis) MakeRedisClient() any { return o.c }

// queueDashboard is asynqmon, the Asynq queue dashboard, read-only behind
// ADMIN_TOKEN. Its page calls its own API with the browser's credentials,
// so the token is taken as HTTP basic auth (any user name, the token as
// password) beside the admin API's bearer form. Only GET is routed: the
// dashboard can look, never cancel, delete or run a task.
func (s *Server) queueDashboard() echo.HandlerFunc {
	return echo.WrapHandler(asynqmon.New(asynqmon.Options{
		RootPath:     queuesPath,
		RedisConnOpt: sharedRedis{s.rdb},
		ReadOnly:     true,
	}))
}

// dashboardAuth lets through requests bearing ADMIN_TOKEN, as a bearer token
// or as the password of basic auth; others get 401 and the browser's
// login prompt.
func (s *Server) dashboardAuth(next echo.HandlerFunc) echo.HandlerFunc {
	want := sha256.Sum256([]byte(s.cfg.AdminToken))
	return func(c echo.Context) error {
		if err := s.authBlocked(c); err != nil {
			return err
		}
		r := c.Request()
		_, token, ok := r.BasicAuth()
		if !ok {
			token, _ = bearer(r)
		}
		got := sha256.Sum256([]byte(token))
		if token == "" || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			c.Response().Header().Set(echo.HeaderWWWAuthenticate, `Basic realm="carphoto queues", charset="UTF-8"`)
			return s.authFailed(c, carphoto.Errorf(carphoto.EInvalidAPIKey, "the queue dashboard needs ADMIN_TOKEN: as the password of the login prompt, or Authorization: Bearer <ADMIN_TOKEN>"))
		}
		c.Response().Header().Set(echo.HeaderCacheControl, "no-store")
		return next(c)
	}
}
