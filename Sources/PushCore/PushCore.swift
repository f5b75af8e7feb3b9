// PushCore
