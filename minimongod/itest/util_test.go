package itest

import (
	"errors"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

type mongoIndexModel = mongo.IndexModel
