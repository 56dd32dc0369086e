package videokill

import (
	"testing"

	"carphoto/internal/testenv/e2etest"
)

func TestMain(m *testing.M) { e2etest.Main(m, killedDB) }
