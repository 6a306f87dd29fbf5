// The CNCF distribution registry as the tests run it: plain HTTP, no auth, the filesystem storage
// driver. Upstream's cmd/registry also links the Azure, GCS and S3 drivers and their SDKs, most of
// what a cold build of it downloads and compiles.
package main

import (
	"os"

	"github.com/distribution/distribution/v3/registry"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/filesystem"
)

func main() {
	if err := registry.RootCmd.Execute(); err != nil {
		os.Exit(1)
	}
}
