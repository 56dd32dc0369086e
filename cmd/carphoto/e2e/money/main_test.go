package money

import (
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// redisDB is this package's database on a shared real Redis.
const redisDB = 10

func TestMain(m *testing.M) { e2etest.Main(m, redisDB) }
