@_exported import GQLStore
