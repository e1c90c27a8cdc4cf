package leadership_test

import "github.com/leadership-go/leadership/internal/memfault"

func memoryStop(name string)  { memfault.StopServer(name) }
func memoryStart(name string) { memfault.StartServer(name) }
