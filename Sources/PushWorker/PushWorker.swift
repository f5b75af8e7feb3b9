// PushWorker
