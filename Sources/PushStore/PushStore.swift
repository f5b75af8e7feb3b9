// PushStore
