import { DefinitionsScreen } from './Definitions'

export default function PropertyDefinitions() {
  return <DefinitionsScreen kind="property" />
}
