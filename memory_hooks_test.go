package leadership

import (
	"context"

	"github.com/leadership-go/leadership/internal/memfault"
	"github.com/leadership-go/leadership/store/memory"
)

func stopServer(name string)  { memfault.StopServer(name) }
func startServer(name string) { memfault.StartServer(name) }

func openMemory(name string) (*memory.Store, error) {
	return memory.Open(context.Background(), memory.Config{Name: name})
}

func loseData(name string) { memfault.LoseData(name) }
