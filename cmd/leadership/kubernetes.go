//go:build !leadership_no_kubernetes

package main

// k8s:// URLs: the Kubernetes backend lives in a module of its own
// (store/kubernetes), which registers its scheme with store/open. Build
// with -tags leadership_no_kubernetes to leave it, and client-go, out
// (about 35 MB of the binary).
import _ "github.com/leadership-go/leadership/store/kubernetes/register"

// kubernetesLeftOut, when not "", is why this build cannot open k8s://.
const kubernetesLeftOut = ""
